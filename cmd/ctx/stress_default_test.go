//go:build !stress

package main_test

// stressIterations is how many kills of each kind TestKillStress makes in `make test`; `make stress`
// builds with -tags stress for 100.
const stressIterations = 5

// racingClones and racingRounds size TestRemoteRacingPushers in `make test`: 5 clones pushing at once,
// 2 rounds; `make stress` builds with -tags stress for 10 clones and 3 rounds.
const racingClones, racingRounds = 5, 2
