package telemetry

// Training spans (docs/maintenance.md section 9): a job is the root of its own
// trace and each optimizer step is a child span of it.
const (
	SpanTrainingJob  = "kiln.training_job"
	SpanTrainingStep = "kiln.training_step"
)

// Attributes of the training spans.
const (
	AttrTrainingJobID      = "kiln.training.job_id"
	AttrTrainingType       = "kiln.training.type" // "sft"
	AttrTrainingStep       = "kiln.training.step"
	AttrTrainingEpoch      = "kiln.training.epoch"
	AttrTrainingTotalSteps = "kiln.training.total_steps"
	AttrTrainingTokens     = "kiln.training.tokens"
	AttrTrainingLoss       = "kiln.training.loss"
	AttrTrainingStatus     = "kiln.training.status" // completed, failed, cancelled
)

// Training job outcomes: kiln_training_jobs_total's status label, a closed
// set.
const (
	TrainingCompleted = "completed"
	TrainingFailed    = "failed"
	TrainingCancelled = "cancelled"
)

// LabelType is kiln_training_jobs_total's job type label; "sft" is the
// only type.
const LabelType = "type"
