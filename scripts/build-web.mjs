// Build step: dist/web.mjs, the Web build as one self-contained ES module (esbuild from src/, npm packages inlined), and its types' ESM twin.
// From src/ because tsc drops the `/* @__PURE__ */` marks that let a bundler leave the Node-only loaders out
// (src/dependencies.ts); not minified, so a stack trace reads (an app's bundler minifies it with the rest).
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { bundleWeb } from './web-bundle.mjs'

const dist = path.join(import.meta.dirname, '..', 'dist')
const { code, builtins } = await bundleWeb('src/web.ts', { minify: false })
if (builtins.length > 0) {
  console.error('dist/web.mjs would import Node built-ins: ' + builtins.join(', '))
  process.exit(1)
}
writeFileSync(path.join(dist, 'web.mjs'), '// bodykit/web: the readers on Web primitives only (built from src/web.ts by scripts/build-web.mjs).\n' + code)
// The same declarations for `import`: the module's exports are the CommonJS entry's.
writeFileSync(path.join(dist, 'web.d.mts'), "export * from './web.js'\n")
