// Package testshared finds the project's shared reference data for tests:
// the folder ../shared beside the module root (models, tokenizer
// references), which CI always has and a bare checkout may not. A test that
// needs it calls Require, which skips the test with a clear message when
// the data is absent.
package testshared
