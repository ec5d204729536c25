package app

import "testing"

// exitSection lists 0, 1 and 130 with the codes given, in numeric order, a command's own words replacing
// the usual meaning, aligned as `%-3d  %s` would.
func TestExitSectionFormat(t *testing.T) {
	got := exitSection([]exit{{code: ExitNotFound, when: "no such {{entry}}"}, {code: ExitUsage}, {code: ExitFailure}})
	want := "\nEXIT STATUS:\n" +
		"   0    success\n" +
		"   1    " + exitMeaning[ExitFailure] + "\n" +
		"   2    " + exitMeaning[ExitUsage] + "\n" +
		"   3    no such {{\"{{\"}}entry}}\n" +
		"   130  " + exitMeaning[exitInterrupted] + "\n"
	if got != want {
		t.Errorf("exitSection:\n%q\nwant\n%q", got, want)
	}
}
