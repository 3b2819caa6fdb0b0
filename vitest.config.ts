import { defineConfig } from "vitest/config";

// Two projects: "unit" needs nothing running; "integration" (*.int.test.ts and the end-to-end
// suites in test/) gets a real FerretDB and nats-server from the global setup.
export default defineConfig({
  // Workspace packages that are built for publishing (the SDK) resolve to their TypeScript source
  // in the repository through the "kiln-source" export condition.
  resolve: { conditions: ["kiln-source"] },
  ssr: { resolve: { conditions: ["kiln-source"] } },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["{proto,services/*,libs/*,gateway,launcher,sdk,testing}/src/**/*.test.ts"],
          exclude: ["**/*.int.test.ts", "**/node_modules/**"],
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
