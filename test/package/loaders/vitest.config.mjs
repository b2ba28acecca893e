// Vitest's settings for the matrix: the ES module suite, with `it` as a global as the other runners give it.
export default { test: { include: ['esm-suite.mjs'], globals: true } }
