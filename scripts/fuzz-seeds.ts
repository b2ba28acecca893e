// Writes the hand-written seeds of every Jazzer.js target (test/fuzz/targets/*.ts `seeds`) into its corpus folder as
// `seed-<name>` files: `node --import tsx scripts/fuzz-seeds.ts`. Inputs the fuzzer found sit beside them, untouched.
import fs from 'node:fs'
import path from 'node:path'
import { writeSeed } from '../test/fuzz/targets/harness'
import { TARGETS } from '../test/fuzz/targets/index'

const root = path.join(__dirname, '..', 'test', 'fuzz', 'corpus')
for (const [name, target] of Object.entries(TARGETS)) {
  const dir = path.join(root, name)
  fs.mkdirSync(dir, { recursive: true })
  for (const file of fs.readdirSync(dir)) if (file.startsWith('seed-')) fs.rmSync(path.join(dir, file))
  for (const [seed, answers] of Object.entries(target.seeds)) fs.writeFileSync(path.join(dir, 'seed-' + seed), writeSeed(target.draw, answers))
  console.log(`${name}: ${Object.keys(target.seeds).length} seeds`)
}
