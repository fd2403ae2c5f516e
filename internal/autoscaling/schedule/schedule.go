// Package schedule reads the schedules of CronFederatedHPA rules and says
// when each fires: cron expressions as CronJobs write them, in a rule's
// time zone.
package schedule

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // rules' time zones, whatever the host has

	"github.com/robfig/cron/v3"
)

// Parse reads a rule's schedule: five fields as a CronJob's (minute, hour,
// day of month, month, day of week) or a descriptor (@hourly, @daily,
// ...). A time zone belongs in the rule's timeZone, not in the schedule.
func Parse(s string) (cron.Schedule, error) {
	if strings.Contains(s, "TZ=") {
		return nil, fmt.Errorf("the time zone is set with timeZone, not in the schedule")
	}
	return cron.ParseStandard(s)
}

// Location is a rule's time zone: the named one, else local (the
// controller manager's own, as Karmada's).
func Location(tz *string) (*time.Location, error) {
	if tz == nil {
		return time.Local, nil
	}
	if *tz == "" {
		return nil, fmt.Errorf("an empty time zone: name one of the tz database (e.g. Europe/Paris) or leave timeZone unset")
	}
	return time.LoadLocation(*tz)
}

// Next is when the schedule fires next after t, read in loc (a daily rule
// at 02:30 fires at 02:30 local time whatever the offset that day; on a
// day the clocks skip 02:30 it fires at the next time that matches).
func Next(s cron.Schedule, loc *time.Location, after time.Time) time.Time {
	return s.Next(after.In(loc))
}

// Due is the last time at or before now the schedule fired since since
// (exclusive), and whether there was one: an execution missed while the
// controller was down is run once, not once per missed time.
func Due(s cron.Schedule, loc *time.Location, since, now time.Time) (time.Time, bool) {
	var last time.Time
	found := false
	for t := s.Next(since.In(loc)); !t.After(now); t = s.Next(t) {
		last, found = t, true
	}
	return last, found
}
