// Command hello is the baseline of the binary-size probes: a Go program
// that only prints.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "hello")
}
