// ioredis through pipescope's observing proxy (backend/tests/observe/clients.rs).
//
//     node ioredis.js PORT NAME MODE N [HOST]
//
// "pipeline": N SETs queued on redis.pipeline() and exec()'d. "auto": enableAutoPipelining,
// and N SETs from 10 concurrent tasks, each awaiting its own SETs one by one (as request
// handlers would): ioredis gathers what is issued in one tick into one write.
const Redis = require("ioredis");

const [port, name, mode, n] = [Number(process.argv[2]), process.argv[3], process.argv[4], Number(process.argv[5])];
const host = process.argv[6] || "127.0.0.1";
const TASKS = 10;

async function main() {
  const redis = new Redis({ host, port, connectionName: name, enableAutoPipelining: mode === "auto" });
  if (mode === "pipeline") {
    const p = redis.pipeline();
    for (let i = 0; i < n; i++) p.set(`io:${name}:${i}`, i);
    const replies = await p.exec();
    if (replies.length !== n || replies.some(([err]) => err)) throw new Error("pipeline replies");
  } else if (mode === "auto") {
    const task = async (t) => {
      for (let i = t; i < n; i += TASKS) await redis.set(`io:${name}:${i}`, i);
    };
    await Promise.all(Array.from({ length: TASKS }, (_, t) => task(t)));
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  await redis.quit();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
