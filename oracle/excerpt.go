package oracle

import (
	"strconv"
	"strings"
)

// Excerpts: the oracle shows records as one short line each, built from a
// recView. A recView holds bounded prefixes of a record, so the streaming
// check can keep one per windowed record without allocating, and both
// modes render byte-identical excerpts.

const (
	viewIDCap    = 40
	viewBytesCap = 16
)

type recView struct {
	offset   int64
	tsMilli  int64
	keyLen   int32
	valLen   int32
	nHeaders int32
	idLen    int32 // -1: no ID header
	keyNil   bool
	valNil   bool
	id       [viewIDCap]byte
	key      [viewBytesCap]byte
	val      [viewBytesCap]byte
}

func (v *recView) set(r *Record) {
	v.offset = r.Offset
	v.tsMilli = r.Timestamp.UnixMilli()
	v.keyLen, v.keyNil = int32(len(r.Key)), r.Key == nil
	v.valLen, v.valNil = int32(len(r.Value)), r.Value == nil
	v.nHeaders = int32(len(r.Headers))
	copy(v.key[:], r.Key)
	copy(v.val[:], r.Value)
	v.idLen = -1
	if id, ok := r.idBytes(); ok {
		v.idLen = int32(len(id))
		copy(v.id[:], id)
	}
}

// idString returns the record's ID, cut to viewIDCap bytes and marked
// with "…" when longer; "" when it has none.
func (v *recView) idString() string {
	switch {
	case v.idLen < 0:
		return ""
	case v.idLen > viewIDCap:
		return string(v.id[:]) + "…"
	default:
		return string(v.id[:v.idLen])
	}
}

func quoteBytes(b []byte, n int32, isNil bool) string {
	if isNil {
		return "nil"
	}
	if n <= int32(len(b)) {
		return strconv.Quote(string(b[:n]))
	}
	return strconv.Quote(string(b)) + "…(" + strconv.Itoa(int(n)) + "B)"
}

// String renders v as `@offset id=… k="…" v="…" h=N ts=millis`.
func (v *recView) String() string {
	var sb strings.Builder
	sb.WriteByte('@')
	sb.WriteString(strconv.FormatInt(v.offset, 10))
	if v.idLen >= 0 {
		sb.WriteString(" id=")
		sb.WriteString(v.idString())
	}
	sb.WriteString(" k=")
	sb.WriteString(quoteBytes(v.key[:], v.keyLen, v.keyNil))
	sb.WriteString(" v=")
	sb.WriteString(quoteBytes(v.val[:], v.valLen, v.valNil))
	sb.WriteString(" h=")
	sb.WriteString(strconv.Itoa(int(v.nHeaders)))
	sb.WriteString(" ts=")
	sb.WriteString(strconv.FormatInt(v.tsMilli, 10))
	return sb.String()
}

func viewOf(r *Record) recView {
	var v recView
	v.set(r)
	return v
}

// excerpt renders a violation's one-line side-by-side excerpt; a nil side
// is shown as "-".
func excerpt(src, dst *recView) string {
	s, d := "-", "-"
	if src != nil {
		s = src.String()
	}
	if dst != nil {
		d = dst.String()
	}
	return "src " + s + " | dst " + d
}
