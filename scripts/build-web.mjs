// Build step: dist/web.mjs, dist/hono-web.mjs and dist/h3-web.mjs, the Web build and Hono and h3 over it, each one ES module (esbuild from src/, npm packages inlined, hono and h3 left to the app), and web.d.mts.
// From src/ because tsc drops the `/* @__PURE__ */` marks that let a bundler leave the Node-only loaders out
// (src/dependencies.ts); not minified, so a stack trace reads (an app's bundler minifies it with the rest).
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { bundleWeb } from './web-bundle.mjs'

const dist = path.join(import.meta.dirname, '..', 'dist')
for (const [source, output, role, webAs] of [['src/web.ts', 'web.mjs', 'bodykit/web: the readers on Web primitives only', null],
  ['src/hono-web.mts', 'hono-web.mjs', 'bodykit/hono where there is no Node: the middlewares over bodykit/web', './web.mjs'],
  ['src/h3-web.mts', 'h3-web.mjs', 'bodykit/h3 where there is no Node: the readers over bodykit/web', './web.mjs']]) {
  const { code, builtins } = await bundleWeb(source, { minify: false, webAs })
  if (builtins.length > 0) {
    console.error(`dist/${output} would import Node built-ins: ${builtins.join(', ')}`)
    process.exit(1)
  }
  // tsc wrote an ES module of its own for a .mts source (importing the CommonJS build): the bundle replaces it.
  writeFileSync(path.join(dist, output), `// ${role} (built from ${source} by scripts/build-web.mjs).\n` + code)
}
// The same declarations for `import`: the module's exports are the CommonJS entry's.
writeFileSync(path.join(dist, 'web.d.mts'), "export * from './web.js'\n")
