// A Go program (cgo: the tracer is in its process) that starts children
// with os/exec and an environment of its own (issue 26, item 9): Go forks
// and execs by raw system calls, so nothing in the process sees a child,
// whose environment lacks LD_PRELOAD. Usage: go_exec TIMES PROGRAM [ARGS...]
// runs PROGRAM TIMES times, one after the other, and prints the children's
// output, then "children ok" or "child failed: WHY".
package main

// #include <stdlib.h>
import "C"

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
)

func main() {
	times, _ := strconv.Atoi(os.Args[1])
	C.free(C.malloc(4444))
	for i := 0; i < times; i++ {
		cmd := exec.Command(os.Args[2], os.Args[3:]...)
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		cmd.Stdout = os.Stdout
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Println("child failed:", err)
			os.Exit(0)
		}
	}
	fmt.Println("children ok")
}
