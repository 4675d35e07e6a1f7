//go:build race

package main

// raceEnabled: under the race detector the reference-model sweep checks one
// prompt per model (see TestGenerateRefModels).
const raceEnabled = true
