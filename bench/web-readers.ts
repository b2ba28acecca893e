// One-off speed figure for the Web build (issue 44): readJson(request) from the Web bundle against request.json(), on Node,
// Bun and Deno (the runtimes cached in /tmp/bodykit-runtimes by test/runtimes). Run: node --import tsx bench/web-readers.ts
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import * as esbuild from 'esbuild'
import { bundleWeb } from '../scripts/web-bundle.mjs'

async function main (): Promise<void> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-web-bench-'))
  try {
    // The real Web bundle, inlined into the runner where it imports src/web.
    const { code } = await bundleWeb('src/web.ts')
    fs.writeFileSync(path.join(folder, 'web.mjs'), code)
    const runner = path.join(folder, 'run.mjs')
    await esbuild.build({
      entryPoints: [path.join(__dirname, 'web-readers-run.ts')],
      outfile: runner,
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      target: 'es2022',
      logLevel: 'error',
      plugins: [{ name: 'web-bundle', setup: (build) => { build.onResolve({ filter: /\/src\/web$/ }, () => ({ path: path.join(folder, 'web.mjs') })) } }]
    })
    const cache = path.join(os.tmpdir(), 'bodykit-runtimes')
    const runtimes: Array<[string, string, string[]]> = [
      ['Node ' + process.version, process.execPath, [runner]],
      ['Bun 1.4.5', path.join(cache, 'bun@1.4.5/node_modules/.bin/bun'), ['run', runner]],
      ['Deno 2.9.6', path.join(cache, 'deno@2.9.6/node_modules/.bin/deno'), ['run', '--no-lock', runner]]
    ]
    for (const [name, bin, args] of runtimes) {
      if (!fs.existsSync(bin)) { console.log(`${name}: not installed (run the runtime tests once)`); continue }
      const results = JSON.parse(execFileSync(bin, args, { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', DENO_DIR: path.join(folder, 'deno-dir') } })) as Record<string, number>
      console.log(`\n${name} (ops/s, median of 5 runs of 300 ms)`)
      for (const [label, ops] of Object.entries(results)) console.log(`  ${label.padEnd(34)} ${ops.toLocaleString('en-US').padStart(10)}`)
    }
  } finally {
    fs.rmSync(folder, { recursive: true, force: true })
  }
}

void main()
