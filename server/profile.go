package server

import (
	"fmt"
	"net/http"

	"github.com/kiln-ai/kiln/server/wire"
)

// ServingProfile is what the server runs for (docs/maintenance.md section 1),
// fixed at start-up: --serving-profile / KILN_SERVING_PROFILE.
type ServingProfile string

// Serving profiles.
const (
	// ProfileStable serves inference; maintenance (resize, trim, adapter,
	// training) runs beside it through writer-priority ownership.
	ProfileStable ServingProfile = "stable"
	// ProfileExperimental behaves as stable on this backend (kept for
	// compatibility with the Rust Kiln's flag values).
	ProfileExperimental ServingProfile = "experimental"
	// ProfileMaintenance disables inference (chat answers 503
	// inference_disabled_by_profile, /health 503 "maintenance");
	// maintenance runs uncontended.
	ProfileMaintenance ServingProfile = "maintenance"
)

// Where a profile came from: ProfileSource values.
const (
	SourceDefault = "default"
	SourceFlag    = "flag"
	SourceEnv     = "env"
)

// Policy values of an effective policy entry.
const (
	policyWriterPriority = "writer_priority"
	policyExclusive      = "exclusive"
)

// ParseServingProfile parses a profile name.
func ParseServingProfile(s string) (ServingProfile, error) {
	switch p := ServingProfile(s); p {
	case ProfileStable, ProfileExperimental, ProfileMaintenance:
		return p, nil
	}
	return "", fmt.Errorf("serving_profile: %q is not stable, experimental or maintenance", s)
}

// ProfileFlag is the flag.Value of --serving-profile over cfg: a Set
// records the profile and marks its source SourceFlag (cmd/kiln turns that
// into SourceEnv for a value that came from KILN_SERVING_PROFILE).
func ProfileFlag(cfg *Config) interface {
	String() string
	Set(string) error
} {
	return profileFlag{cfg}
}

type profileFlag struct{ cfg *Config }

func (f profileFlag) String() string {
	if f.cfg == nil {
		return string(ProfileStable)
	}
	return string(f.cfg.ServingProfile)
}

func (f profileFlag) Set(s string) error {
	p, err := ParseServingProfile(s)
	if err != nil {
		return err
	}
	f.cfg.ServingProfile, f.cfg.ProfileSource = p, SourceFlag
	return nil
}

// servingProfileJSON is the serving_profile object of /health and
// /v1/config.
type servingProfileJSON struct {
	Profile         ServingProfile  `json:"profile"`
	Source          string          `json:"source"`
	EffectivePolicy effectivePolicy `json:"effective_policy"`
}

// effectivePolicy says how each kind of maintenance shares the device with
// inference under the profile.
type effectivePolicy struct {
	TrainingGPUOwnership     string `json:"training_gpu_ownership"`
	AdapterWeightTransitions string `json:"adapter_weight_transitions"`
	DynamicKVResize          string `json:"dynamic_kv_resize"`
	AllocatorReclaim         string `json:"allocator_reclaim"`
}

// servingProfile is the serving_profile object of cfg.
func (c *Config) servingProfile() servingProfileJSON {
	p := policyWriterPriority
	if c.ServingProfile == ProfileMaintenance {
		p = policyExclusive // nothing to share with: inference is off
	}
	return servingProfileJSON{
		Profile: c.ServingProfile, Source: c.ProfileSource,
		EffectivePolicy: effectivePolicy{TrainingGPUOwnership: p, AdapterWeightTransitions: p, DynamicKVResize: p, AllocatorReclaim: p},
	}
}

// inferenceAllowed is nil unless the profile disables inference; then it
// is the 503 every chat request gets.
func (s *Server) inferenceAllowed() error {
	if s.cfg.ServingProfile != ProfileMaintenance {
		return nil
	}
	return &wire.Error{Status: http.StatusServiceUnavailable, Type: wire.TypeServer, Code: "inference_disabled_by_profile",
		Message: "inference is disabled: this server runs the maintenance serving profile (restart it with --serving-profile stable to serve chat completions)"}
}
