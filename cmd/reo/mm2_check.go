package main

import (
	"fmt"
	"slices"
	"strings"
)

// checkFlows proves, before anything starts, that the enabled flows of a
// file never send a record back to the cluster it came from and never
// write one destination topic from two flows; otherwise it refuses the
// file with an example topic.
//
// Under DefaultReplicationPolicy both hold by construction (a copy is
// named after its source alias, and MirrorMaker 2's cycle rule, which reo
// applies, never copies a topic named after the target back to it). Under
// IdentityReplicationPolicy nothing prevents them: an A->B plus B->A pair
// whose topic selections overlap would copy records back and forth
// forever, and A->C plus B->C would mix two sources in one topic. reo
// computes what each flow reads and writes as automata over topic names
// (topiclang.go) and follows every path of flows.
func (l *mm2Loader) checkFlows(flows []*mm2Flow, clustersProp property) {
	type lang struct {
		sel, dest *dfa
		err       error
	}
	langs := map[*mm2Flow]*lang{}
	for _, f := range flows {
		lg := &lang{}
		lg.sel, lg.err = selection(f.include, f.exclude)
		if lg.err == nil {
			lg.dest = lg.sel
			if !f.identity {
				lg.dest, lg.err = withPrefix(f.prefix, lg.sel)
			}
		}
		langs[f] = lg
	}
	enabledProp := func(f *mm2Flow) property {
		if p, ok := l.flowProp(f.source, f.target, "enabled"); ok {
			return p
		}
		return clustersProp
	}
	// cannot reports a selection reo cannot analyse; it matters only when
	// an identity flow is involved (the default policy is safe anyway).
	cannot := func(fs []*mm2Flow, err error) bool {
		for _, f := range fs {
			if langs[f].err == nil && err == nil {
				continue
			}
			if err == nil {
				err = langs[f].err
			}
			for _, g := range fs {
				if g.identity {
					l.fail(enabledProp(g), "cannot prove that flow %s never copies records back or into another flow's topics (%v): simplify the topics expressions", g.label, err)
					return true
				}
			}
			return true
		}
		return false
	}

	// Records back to their cluster: follow every simple path of flows.
	reported := map[string]bool{}
	var walk func(origin string, path []*mm2Flow, cur *dfa)
	walk = func(origin string, path []*mm2Flow, cur *dfa) {
		last := path[len(path)-1]
		for _, g := range flows {
			if g.source != last.target {
				continue
			}
			onPath := false
			for _, p := range path {
				if p.source == g.target && g.target != origin {
					onPath = true
				}
			}
			if onPath || cannot([]*mm2Flow{g}, nil) {
				continue
			}
			m, err := intersect(cur, langs[g].sel)
			if err != nil {
				cannot(append(path, g), err)
				return
			}
			if _, ok := m.shortest(); !ok {
				continue
			}
			next := m
			if !g.identity {
				if next, err = withPrefix(g.prefix, m); err != nil {
					cannot(append(path, g), err)
					return
				}
			}
			full := append(append([]*mm2Flow(nil), path...), g)
			if g.target == origin {
				w, _ := next.shortest()
				// One report per cycle, whichever cluster it is
				// followed from.
				ls := strings.Split(labels(full), ", ")
				slices.Sort(ls)
				key := strings.Join(ls, ",")
				if !reported[key] {
					reported[key] = true
					l.fail(enabledProp(g), "%s", loopMessage(full, w))
				}
				continue
			}
			if len(full) < len(l.aliases) {
				walk(origin, full, next)
			}
		}
	}
	for _, f := range flows {
		if cannot([]*mm2Flow{f}, nil) {
			continue
		}
		walk(f.source, []*mm2Flow{f}, langs[f].dest)
	}

	// Two flows writing one destination topic.
	for i, f := range flows {
		for _, g := range flows[i+1:] {
			if f.target != g.target || cannot([]*mm2Flow{f, g}, nil) {
				continue
			}
			both, err := intersect(langs[f].dest, langs[g].dest)
			if err != nil {
				cannot([]*mm2Flow{f, g}, err)
				continue
			}
			if w, ok := both.shortest(); ok {
				l.fail(enabledProp(g), "flows %s and %s would both write topic %s on %s (%s's topic %s and %s's topic %s): one destination topic can hold the copy of one source topic only. Give the flows disjoint topics (%s.topics, %s.topics.exclude), or use %s, whose prefixes keep the copies apart",
					f.label, g.label, w, f.target, f.source, strings.TrimPrefix(w, f.prefix), g.source, strings.TrimPrefix(w, g.prefix), f.label, g.label, defaultPolicyClass)
			}
		}
	}
}

func labels(fs []*mm2Flow) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.label)
	}
	return strings.Join(out, ", ")
}

// loopMessage explains how a record of path[0].source comes back to it,
// with w the topic it comes back in.
func loopMessage(path []*mm2Flow, w string) string {
	names := make([]string, len(path)+1)
	names[len(path)] = w
	for i := len(path) - 1; i >= 0; i-- {
		names[i] = strings.TrimPrefix(names[i+1], path[i].prefix)
	}
	var steps []string
	for i, f := range path {
		steps = append(steps, fmt.Sprintf("%s copies it to %s as %s", f.label, f.target, names[i+1]))
	}
	origin := path[0].source
	forever := ""
	if names[0] == w {
		forever = ", and round again, forever"
	}
	var ident []string
	for _, f := range path {
		if f.identity {
			ident = append(ident, f.label)
		}
	}
	who := ""
	switch len(ident) {
	case 0:
	case 1:
		who = fmt.Sprintf(" Flow %s uses %s, which keeps topic names and has no cycle rule.", ident[0], identityPolicyClass)
	default:
		who = fmt.Sprintf(" Flows %s use %s, which keeps topic names and has no cycle rule.", strings.Join(ident, " and "), identityPolicyClass)
	}
	fix := fmt.Sprintf("or use %s, whose cycle rule never copies a topic back to the cluster it came from", defaultPolicyClass)
	var seps []string
	distinct := map[string]bool{}
	for _, f := range path {
		seps = append(seps, fmt.Sprintf("%s %q", f.label, f.cfg.Separator))
		distinct[f.cfg.Separator] = true
	}
	if len(ident) == 0 && len(distinct) > 1 {
		// Every flow has the cycle rule, but one flow's rule does not
		// recognise another's copies.
		who = " The flows' separators differ, so the cycle rule of one does not recognise the copies of another."
		fix = fmt.Sprintf("or use one replication.policy.separator for every flow (%s)", strings.Join(seps, ", "))
	}
	return fmt.Sprintf("flows %s would copy records back to %s: a record of %s's topic %s travels back (%s%s).%s Give the flows disjoint topics (for example %s.topics.exclude), %s",
		labels(path), origin, origin, names[0], strings.Join(steps, "; "), forever, who, path[len(path)-1].label, fix)
}
