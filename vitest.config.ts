import { defineConfig } from "vitest/config";

// Two projects: "unit" needs nothing running; "integration" (*.int.test.ts and the end-to-end
// suites in test/) gets a real FerretDB and nats-server from the global setup.
export default defineConfig({
  // Workspace packages that are built for publishing (the SDK) resolve to their TypeScript source
  // in the repository through the "kiln-source" export condition.
  resolve: { conditions: ["kiln-source"] },
  ssr: { resolve: { conditions: ["kiln-source"] } },
  test: {
    // Files run in parallel workers. vitest's default is one worker per core less one, which on the
    // 2-core CI machine means one: the whole suite ran file after file although most integration
    // files spend their time waiting on servers, the bus and child processes rather than on the CPU.
    // Every file isolates itself (own database and stream names, own servers on free ports), so
    // files can share the machine. KILN_TEST_WORKERS overrides the count (1 = the old serial run).
    maxWorkers: Number(process.env.KILN_TEST_WORKERS) || 3,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["{proto,services/*,libs/*,gateway,launcher,sdk,testing}/src/**/*.test.ts"],
          exclude: ["**/*.int.test.ts", "**/node_modules/**"],
          // A few unit tests are CPU work (every route schema compiled, the launcher bundled and its
          // source maps decoded): vitest's 5 s default cut them off when workers share two cores.
          testTimeout: 30_000,
          // Their beforeAll hooks build whole gateways and services (every route schema compiled):
          // vitest's 10 s default cut them off on a loaded machine.
          hookTimeout: 30_000,
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["{services/*,libs/*,gateway,launcher,testing}/src/**/*.int.test.ts", "test/**/*.test.ts"],
          exclude: ["**/node_modules/**"],
          globalSetup: ["./test/support/global-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
