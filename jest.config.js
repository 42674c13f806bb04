/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
  },
  // Compiles the worker threads' entry points, which Node cannot run as .ts (compile-workers.ts).
  globalSetup: '<rootDir>/test/support/compile-workers.ts',
  setupFiles: ['<rootDir>/test/support/setup-env.ts'],
  maxWorkers: 2,
  testTimeout: 30000,
};
