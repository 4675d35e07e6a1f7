package telemetry

// AttrChoiceIndex is the choice a chat span serves when the request asked
// for n > 1 choices (each choice is its own request span).
const AttrChoiceIndex = "kiln.choice.index"
