//go:build stress

package main_test

// stressIterations under -tags stress (make stress): 100 kills of each kind.
const stressIterations = 100

// racingClones and racingRounds under -tags stress: TestRemoteRacingPushers with 10 clones, 3 rounds.
const racingClones, racingRounds = 10, 3
