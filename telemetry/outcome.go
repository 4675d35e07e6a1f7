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

var outcomeNames = [numOutcomes]string{"ok", "error", "timeout", "rejected", "client_disconnect"}

// String returns the status label value.
func (o Outcome) String() string {
	if o < numOutcomes {
		return outcomeNames[o]
	}
	return "error"
}
