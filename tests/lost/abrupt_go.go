// A Go program whose C side makes 320,000 mallocs and which ends by
// os.Exit: Go's runtime makes the exit_group system call itself, so no
// exit handler runs (issue 26, item 8). As abrupt_end.c, it first makes
// one 4444-byte block and sleeps 500 ms, so the tracer writes every event
// made before the loop.
package main

// #include <stdlib.h>
import "C"

import (
	"os"
	"time"
	"unsafe"
)

func main() {
	keep := make([]unsafe.Pointer, 0, 320000)
	marker := C.malloc(4444)
	time.Sleep(500 * time.Millisecond)
	for i := 0; i < 320000; i++ {
		keep = append(keep, C.malloc(44))
	}
	_ = marker
	os.Exit(0)
}
