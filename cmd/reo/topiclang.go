package main

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
)

// Topic languages: which topic names a flow reads and writes, as
// deterministic automata over the characters Kafka allows in a topic name
// ([a-zA-Z0-9._-], at most 249 of them). They let reo prove, before it
// starts, that the flows of one MirrorMaker 2 file can never send a record
// back to the cluster it came from and never write one destination topic
// from two flows, and otherwise name a topic that shows the problem.

const (
	topicAlphabet = "-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
	nSym          = len(topicAlphabet)
	maxTopicLen   = 249
	// maxDFAStates bounds every automaton built; a selection too complex
	// to analyse within it is reported as such.
	maxDFAStates = 20000
)

// witnessOrder is the order in which example topic names are tried:
// readable ones first.
const witnessOrder = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-_."

var errTooComplex = errors.New("the topic regular expressions are too complex to analyse")

// dfa is a complete deterministic automaton; state 0 is the start.
type dfa struct {
	next   [][nSym]int32
	accept []bool
}

// symIndex maps a byte to its symbol, or -1.
var symIndex = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < nSym; i++ {
		t[topicAlphabet[i]] = int8(i)
	}
	return
}()

// compileTopicDFA builds the automaton of the topic names a regular
// expression matches whole (as reo and MirrorMaker 2 match topics).
// Word-boundary assertions are not supported.
func compileTopicDFA(expr string) (*dfa, error) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, err
	}
	// closure follows empty transitions from pcs; atStart says whether no
	// character was read yet, atEnd whether the input ends here. It
	// returns the consuming instructions and whether Match was reached.
	closure := func(pcs []uint32, atStart, atEnd bool) ([]uint32, bool, error) {
		seen := map[uint32]bool{}
		var out []uint32
		match := false
		stack := slices.Clone(pcs)
		for len(stack) > 0 {
			pc := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[pc] {
				continue
			}
			seen[pc] = true
			in := &prog.Inst[pc]
			switch in.Op {
			case syntax.InstAlt, syntax.InstAltMatch:
				stack = append(stack, in.Out, in.Arg)
			case syntax.InstCapture, syntax.InstNop:
				stack = append(stack, in.Out)
			case syntax.InstEmptyWidth:
				op := syntax.EmptyOp(in.Arg)
				if op&(syntax.EmptyWordBoundary|syntax.EmptyNoWordBoundary) != 0 {
					return nil, false, errors.New(`\b and \B are not supported in topic expressions reo analyses`)
				}
				if op&(syntax.EmptyBeginLine|syntax.EmptyBeginText) != 0 && !atStart {
					continue
				}
				if op&(syntax.EmptyEndLine|syntax.EmptyEndText) != 0 && !atEnd {
					continue
				}
				stack = append(stack, in.Out)
			case syntax.InstMatch:
				match = true
			case syntax.InstFail:
			default: // consuming
				out = append(out, pc)
			}
		}
		slices.Sort(out)
		return out, match, nil
	}
	type kstate struct {
		kernel  []uint32
		atStart bool
	}
	keyOf := func(k kstate) string {
		var b strings.Builder
		if k.atStart {
			b.WriteByte('^')
		}
		for _, pc := range k.kernel {
			b.WriteString(strconv.Itoa(int(pc)))
			b.WriteByte(',')
		}
		return b.String()
	}
	d := &dfa{}
	index := map[string]int32{}
	var queue []kstate
	add := func(k kstate) (int32, error) {
		key := keyOf(k)
		if i, ok := index[key]; ok {
			return i, nil
		}
		if len(d.next) >= maxDFAStates {
			return 0, errTooComplex
		}
		_, acc, err := closure(k.kernel, k.atStart, true)
		if err != nil {
			return 0, err
		}
		i := int32(len(d.next))
		index[key] = i
		d.next = append(d.next, [nSym]int32{})
		d.accept = append(d.accept, acc)
		queue = append(queue, k)
		return i, nil
	}
	if _, err := add(kstate{kernel: []uint32{uint32(prog.Start)}, atStart: true}); err != nil {
		return nil, err
	}
	for qi := 0; qi < len(queue); qi++ {
		k := queue[qi]
		cons, _, err := closure(k.kernel, k.atStart, false)
		if err != nil {
			return nil, err
		}
		for s := 0; s < nSym; s++ {
			var nk []uint32
			for _, pc := range cons {
				if prog.Inst[pc].MatchRune(rune(topicAlphabet[s])) {
					nk = append(nk, prog.Inst[pc].Out)
				}
			}
			slices.Sort(nk)
			nk = slices.Compact(nk)
			j, err := add(kstate{kernel: nk})
			if err != nil {
				return nil, err
			}
			d.next[qi][s] = j
		}
	}
	return d, nil
}

// product combines two automata; keep decides acceptance.
func product(a, b *dfa, keep func(x, y bool) bool) (*dfa, error) {
	type pair struct{ x, y int32 }
	index := map[pair]int32{{0, 0}: 0}
	queue := []pair{{0, 0}}
	d := &dfa{next: make([][nSym]int32, 1), accept: []bool{keep(a.accept[0], b.accept[0])}}
	for qi := 0; qi < len(queue); qi++ {
		p := queue[qi]
		for s := 0; s < nSym; s++ {
			np := pair{a.next[p.x][s], b.next[p.y][s]}
			j, ok := index[np]
			if !ok {
				if len(d.next) >= maxDFAStates {
					return nil, errTooComplex
				}
				j = int32(len(d.next))
				index[np] = j
				d.next = append(d.next, [nSym]int32{})
				d.accept = append(d.accept, keep(a.accept[np.x], b.accept[np.y]))
				queue = append(queue, np)
			}
			d.next[qi][s] = j
		}
	}
	return d, nil
}

func intersect(a, b *dfa) (*dfa, error) {
	return product(a, b, func(x, y bool) bool { return x && y })
}

func subtract(a, b *dfa) (*dfa, error) {
	return product(a, b, func(x, y bool) bool { return x && !y })
}

// withPrefix is the language {lit + t : t in a}. lit must be made of
// topic characters.
func withPrefix(lit string, a *dfa) (*dfa, error) {
	if len(a.next)+len(lit)+1 > maxDFAStates {
		return nil, errTooComplex
	}
	n := int32(len(lit))
	d := &dfa{}
	dead := n + int32(len(a.next)) // a dead state of its own
	for i := 0; i < len(lit); i++ {
		var row [nSym]int32
		for s := range row {
			row[s] = dead
		}
		si := symIndex[lit[i]]
		if si < 0 {
			return nil, fmt.Errorf("%q is not a topic name character", lit[i])
		}
		row[si] = int32(i) + 1
		d.next = append(d.next, row)
		d.accept = append(d.accept, false)
	}
	for i := range a.next {
		var row [nSym]int32
		for s := range row {
			row[s] = a.next[i][s] + n
		}
		d.next = append(d.next, row)
		d.accept = append(d.accept, a.accept[i])
	}
	var row [nSym]int32
	for s := range row {
		row[s] = dead
	}
	d.next = append(d.next, row)
	d.accept = append(d.accept, false)
	return d, nil
}

// shortest returns the shortest topic name of d's language, and false
// when it holds none of at most maxTopicLen characters.
func (d *dfa) shortest() (string, bool) {
	prev := make([]int32, len(d.next))
	sym := make([]byte, len(d.next))
	depth := make([]int, len(d.next))
	for i := range prev {
		prev[i] = -2
	}
	prev[0] = -1
	queue := []int32{0}
	for qi := 0; qi < len(queue); qi++ {
		st := queue[qi]
		if d.accept[st] && depth[st] > 0 {
			var b []byte
			for s := st; prev[s] >= 0; s = prev[s] {
				b = append(b, sym[s])
			}
			slices.Reverse(b)
			return string(b), true
		}
		if depth[st] >= maxTopicLen {
			continue
		}
		for _, c := range []byte(witnessOrder) {
			nx := d.next[st][symIndex[c]]
			if prev[nx] == -2 {
				prev[nx], sym[nx], depth[nx] = st, c, depth[st]+1
				queue = append(queue, nx)
			}
		}
	}
	return "", false
}

// selection is the automaton of the topics a whole-name include
// expression selects minus those the exclude expression names.
func selection(include, exclude string) (*dfa, error) {
	inc, err := compileTopicDFA(include)
	if err != nil {
		return nil, err
	}
	// The empty name is no topic: exclude it too.
	excl := "(?:)"
	if exclude != "" {
		excl = "(?:" + exclude + ")|(?:)"
	}
	exc, err := compileTopicDFA(excl)
	if err != nil {
		return nil, err
	}
	return subtract(inc, exc)
}
