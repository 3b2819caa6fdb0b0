import { type AddressInfo, connect, createServer, type Socket } from "node:net";

/**
 * A TCP relay in front of a server that the test stops and starts: the platform keeps one address
 * while the server comes back on a new port. Restarting on the same port let another test's process
 * take it in the seconds it was free (all four request kinds then answered 503 for a minute).
 */
export async function relay(targetPort: number) {
  let target = targetPort;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target, "127.0.0.1");
    open.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.pipe(upstream).pipe(client);
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );
  return {
    port,
    /** From now on connections go to `next`; the open ones are cut, as a server's stop cuts them. */
    retarget(next: number) {
      target = next;
      for (const socket of open) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
