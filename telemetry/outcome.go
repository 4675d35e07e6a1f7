package telemetry

// Outcome is how a request ended: the closed `status` label of
// kiln_requests_total.
type Outcome uint8

// Outcomes.
const (
	OutcomeOK Outcome = iota
	OutcomeError
	OutcomeTimeout
	OutcomeRejected
	OutcomeClientDisconnect
	numOutcomes
)

// NumOutcomes is the number of outcomes: every defined Outcome is below
// it, so it sizes arrays indexed by Outcome (the server's counters).
const NumOutcomes = numOutcomes

var outcomeNames = [numOutcomes]string{"ok", "error", "timeout", "rejected", "client_disconnect"}

// String returns the status label value.
func (o Outcome) String() string {
	if o < numOutcomes {
		return outcomeNames[o]
	}
	return "error"
}

// ParseOutcome returns the outcome whose status label is name.
func ParseOutcome(name string) (Outcome, bool) {
	for o, n := range outcomeNames {
		if n == name {
			return Outcome(o), true
		}
	}
	return OutcomeError, false
}
