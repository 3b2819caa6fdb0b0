import { describeBusContract } from "@kiln/testing/bus-contract";
import { createMemoryBus } from "./memory-bus.js";

describeBusContract("memory bus", async () => {
  const bus = createMemoryBus();
  return { bus, cleanup: () => bus.close() };
});
