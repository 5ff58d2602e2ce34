package cluster

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStartRetriesTakenPort proves a local or container cluster whose
// broker finds one of its ports taken before it binds it starts again on
// new ports, and that a port taken at every attempt ends in an error that
// says so.
func TestStartRetriesTakenPort(t *testing.T) {
	for _, kind := range []Kind{Local, Testcontainers} {
		t.Run(string(kind), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			if err := Available(ctx, kind); err != nil {
				if errors.Is(err, ErrUnavailable) {
					t.Skipf("provider %s: %v", kind, err)
				}
				t.Fatal(err)
			}
			t.Cleanup(func() { portsFound = nil })

			// take holds the first port of an attempt, as another process
			// would, until the test ends.
			var attempts, taken int
			take := func(every bool) func([]int) {
				return func(ports []int) {
					attempts++
					if attempts > 1 && !every {
						return
					}
					ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(ports[0]))
					if err != nil {
						t.Errorf("take port %d: %v", ports[0], err)
						return
					}
					taken++
					t.Cleanup(func() { ln.Close() })
				}
			}

			portsFound = take(false)
			c, err := Start(ctx, kind, Spec{Name: "porttaken", Brokers: 1})
			if err != nil {
				t.Fatalf("start with the first attempt's port taken: %v", err)
			}
			t.Cleanup(func() { c.Close() })
			if attempts != 2 || taken != 1 {
				t.Fatalf("start took %d attempts with %d ports taken, want 2 and 1", attempts, taken)
			}
			if err := Healthy(ctx, c); err != nil {
				t.Fatalf("cluster started on the second attempt is not healthy: %v", err)
			}

			attempts, taken = 0, 0
			portsFound = take(true)
			c2, err := Start(ctx, kind, Spec{Name: "porttaken2", Brokers: 1})
			if err == nil {
				c2.Close()
				t.Fatal("start succeeded with a port taken at every attempt")
			}
			if !errors.Is(err, errPortTaken) || !strings.Contains(err.Error(), "after 3 attempts") {
				t.Fatalf("start with a port taken at every attempt: %v; want errPortTaken after 3 attempts", err)
			}
			if attempts != portAttempts {
				t.Fatalf("%d attempts, want %d", attempts, portAttempts)
			}
		})
	}
}
