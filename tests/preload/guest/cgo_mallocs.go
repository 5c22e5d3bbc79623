// A Go program whose C code allocates (issue 26 item 1): the Go runtime
// starts its threads through pthread_create and cgo asks each about its
// stack; the mallocs of the C side are the heap events the tracer records.
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../../support
#include <stdlib.h>
#include <string.h>

#include "guest_observables.h"

static long churn(int n) {
	long sum = 0;
	for (int i = 0; i < n; i++) {
		char* p = malloc(64 + i % 100);
		memset(p, i & 0x7f, 8);
		sum += p[3];
		free(p);
	}
	return sum;
}
*/
import "C"

import (
	"fmt"
	"sync"
)

func main() {
	var wg sync.WaitGroup
	sums := make([]int64, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			sums[g] = int64(C.churn(C.int(2000)))
		}(g)
	}
	wg.Wait()
	fmt.Println("hello from go:", sums[0]+sums[1]+sums[2]+sums[3])
	C.guest_observe() // with GUEST_OBSERVE set: what the program sees of itself
}
