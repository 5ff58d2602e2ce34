package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress draws a one-line progress bar on a terminal (redrawn twice a
// second by its own goroutine until Close), or prints one line per step
// elsewhere (CI logs).
type progress struct {
	w     io.Writer
	tty   bool
	start time.Time
	stop  chan struct{}
	done  chan struct{}

	mu         sync.Mutex // guards the fields below
	total      int
	finished   int
	step       string
	count, of  int64
	lastLogged string
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	go func() {
		defer close(p.done)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.draw()
			}
		}
	}()
	return p
}

// Step starts a named step; Count reports progress within it.
func (p *progress) Step(name string) {
	p.mu.Lock()
	p.step, p.count, p.of = name, 0, 0
	p.mu.Unlock()
	if !p.tty {
		fmt.Fprintf(p.w, "[%s] %s\n", p.elapsed(), name)
	}
	p.draw()
}

// Count sets how far the current step is (n of total, total 0: unknown).
func (p *progress) Count(n, total int64) {
	p.mu.Lock()
	p.count, p.of = n, total
	p.mu.Unlock()
}

// Done marks one unit of the plan finished.
func (p *progress) Done() {
	p.mu.Lock()
	p.finished++
	p.mu.Unlock()
	p.draw()
}

// Logf prints a line above the bar.
func (p *progress) Logf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, format+"\n", args...)
}

func (p *progress) elapsed() string {
	return time.Since(p.start).Truncate(time.Second).String()
}

func (p *progress) draw() {
	if !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	const width = 30
	filled := 0
	if p.total > 0 {
		filled = width * p.finished / p.total
	}
	bar := strings.Repeat("=", filled) + strings.Repeat(" ", width-filled)
	detail := ""
	if p.of > 0 {
		detail = fmt.Sprintf(" %d/%d", p.count, p.of)
	} else if p.count > 0 {
		detail = fmt.Sprintf(" %d", p.count)
	}
	line := fmt.Sprintf("[%s] %d/%d %s %s%s", bar, p.finished, p.total, p.elapsed(), p.step, detail)
	if len(line) > 150 {
		line = line[:150]
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
}

// Close stops redrawing and ends the bar's line.
func (p *progress) Close() {
	close(p.stop)
	<-p.done
	if p.tty {
		p.draw()
		fmt.Fprintln(p.w)
	}
}
