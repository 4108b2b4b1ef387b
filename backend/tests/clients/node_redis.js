// node-redis (npm's "redis") through pipescope's observing proxy
// (backend/tests/observe/clients.rs).
//
//     node node_redis.js PORT NAME MODE N [HOST]
//
// "multi": N SETs on client.multi(), sent with execAsPipeline() (no MULTI/EXEC). "tick": N SETs
// issued at once (Promise.all): node-redis writes what is issued in one tick together.
const { createClient } = require("redis");

const [port, name, mode, n] = [Number(process.argv[2]), process.argv[3], process.argv[4], Number(process.argv[5])];
const host = process.argv[6] || "127.0.0.1";

async function main() {
  const client = createClient({ socket: { host, port }, name });
  client.on("error", (e) => {
    console.error(e);
    process.exit(1);
  });
  await client.connect();
  let replies;
  if (mode === "multi") {
    const m = client.multi();
    for (let i = 0; i < n; i++) m.set(`nr:${name}:${i}`, String(i));
    replies = await m.execAsPipeline();
  } else if (mode === "tick") {
    replies = await Promise.all(Array.from({ length: n }, (_, i) => client.set(`nr:${name}:${i}`, String(i))));
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  if (replies.length !== n || replies.some((r) => r !== "OK")) throw new Error("replies");
  await client.quit();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
