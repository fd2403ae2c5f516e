package schedule

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"
)

func TestNextAcrossTimeZonesAndDST(t *testing.T) {
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name, schedule, tz, after, want string
	}{
		{"daily in Paris, winter (UTC+1)", "30 8 * * *", "Europe/Paris", "2026-01-10T12:00:00Z", "2026-01-11T07:30:00Z"},
		{"daily in Paris, summer (UTC+2)", "30 8 * * *", "Europe/Paris", "2026-07-10T12:00:00Z", "2026-07-11T06:30:00Z"},
		{"Paris skips 02:30 on 29 March 2026: the next match is the day after", "30 2 * * *", "Europe/Paris", "2026-03-28T12:00:00Z", "2026-03-30T00:30:00Z"},
		{"New York repeats 01:30 on 1 November 2026: it fires once", "30 1 * * *", "America/New_York", "2026-11-01T04:00:00Z", "2026-11-01T05:30:00Z"},
		{"weekdays in Tokyo (no DST)", "0 9 * * 1-5", "Asia/Tokyo", "2026-11-27T01:00:00Z", "2026-11-30T00:00:00Z"},
		{"every minute", "* * * * *", "UTC", "2026-11-29T10:00:30Z", "2026-11-29T10:01:00Z"},
		{"a descriptor", "@hourly", "UTC", "2026-11-29T10:00:30Z", "2026-11-29T11:00:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.schedule)
			if err != nil {
				t.Fatal(err)
			}
			loc, err := Location(ptr.To(tc.tz))
			if err != nil {
				t.Fatal(err)
			}
			if got := Next(s, loc, utc(tc.after)).UTC(); !got.Equal(utc(tc.want)) {
				t.Errorf("next after %s: %s, want %s", tc.after, got.Format(time.RFC3339), tc.want)
			}
		})
	}
}

func TestDueRunsAMissedExecutionOnce(t *testing.T) {
	s, _ := Parse("*/10 * * * *")
	since := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	if _, ok := Due(s, time.UTC, since, since.Add(9*time.Minute)); ok {
		t.Error("due before the first time")
	}
	got, ok := Due(s, time.UTC, since, since.Add(35*time.Minute))
	if want := since.Add(30 * time.Minute); !ok || !got.Equal(want) {
		t.Errorf("due %s %t, want the last missed time %s", got, ok, want)
	}
}

func TestParseAndLocationRefuse(t *testing.T) {
	for _, s := range []string{"", "61 * * * *", "* * * *", "TZ=UTC * * * * *", "CRON_TZ=Asia/Tokyo 0 9 * * *"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
	for _, tz := range []string{"", "Mars/Olympus"} {
		if _, err := Location(ptr.To(tz)); err == nil {
			t.Errorf("time zone %q accepted", tz)
		}
	}
	if loc, err := Location(nil); err != nil || loc != time.Local {
		t.Errorf("no time zone: %v %v, want local", loc, err)
	}
}
