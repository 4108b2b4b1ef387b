// redigo (Debian's golang-github-gomodule-redigo-dev, built in GOPATH mode): PORT PATTERN N [HOST],
// PATTERN one of loop, pipeline, multi. pipeline: Send N, Flush, Receive N.
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/gomodule/redigo/redis"
)

func main() {
	port, pattern := os.Args[1], os.Args[2]
	n, _ := strconv.Atoi(os.Args[3])
	host := "127.0.0.1"
	if len(os.Args) > 4 {
		host = os.Args[4]
	}
	c, err := redis.Dial("tcp", host+":"+port)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer c.Close()
	must := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	key := func(i int) string { return "go:" + strconv.Itoa(i) }
	switch pattern {
	case "loop":
		for i := 0; i < n; i++ {
			_, err := c.Do("SET", key(i), i)
			must(err)
		}
	case "pipeline":
		for i := 0; i < n; i++ {
			must(c.Send("SET", key(i), i))
		}
		must(c.Flush())
		for i := 0; i < n; i++ {
			_, err := c.Receive()
			must(err)
		}
	case "multi":
		must(c.Send("MULTI"))
		for i := 0; i < n; i++ {
			must(c.Send("SET", key(i), i))
		}
		_, err := c.Do("EXEC")
		must(err)
	default:
		fmt.Fprintln(os.Stderr, "unknown pattern", pattern)
		os.Exit(2)
	}
}
