// Replays every Jazzer.js corpus file (test/fuzz/corpus/<target>/) through its fuzz target, in process and without
// Jazzer's native addon: each input must pass every check of the target. Findings not fixed yet are listed in
// test/fuzz/known-findings.json and reported as todo. Also checks that the seed files are what the seeds write.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { seedOf, sourceOf } from './targets/harness'
import { TARGETS } from './targets/index'

const CORPUS = path.join(__dirname, 'corpus')
const known = JSON.parse(fs.readFileSync(path.join(__dirname, 'known-findings.json'), 'utf8')) as Record<string, string>

describe('Jazzer.js corpus replay', { concurrency: Object.keys(TARGETS).length }, () => {
  for (const [name, target] of Object.entries(TARGETS)) {
    describe(name, () => {
      const dir = path.join(CORPUS, name)
      const files = fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []

      it('has its seeds, as the seeds write them (after changing a draw: node --import tsx scripts/fuzz-seeds.ts)', () => {
        for (const [seed, answers] of Object.entries(target.seeds)) {
          const { bytes, input } = seedOf(target.draw, answers)
          assert.deepEqual(fs.readFileSync(path.join(dir, 'seed-' + seed)), bytes, `seed-${seed} is stale`)
          assert.deepEqual(target.draw(sourceOf(bytes)), input, `seed-${seed} does not read back as written`)
        }
      })

      for (const file of files) {
        const todo = known[`${name}/${file}`]
        it(file, todo === undefined ? {} : { todo }, async () => {
          await target.fuzz(fs.readFileSync(path.join(dir, file)))
        })
      }
    })
  }
})
