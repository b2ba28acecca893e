// Moves the corpus inputs that fail their target (a finding class let through with FUZZ_KNOWN, which libFuzzer then
// keeps as an ordinary input) out of test/fuzz/corpus/ into test/fuzz/findings/<target>/open-<name>, so that the
// corpus npm test replays holds only passing inputs. Run before committing a grown corpus:
//   node --import tsx scripts/fuzz-prune.ts [target ...]
import fs from 'node:fs'
import path from 'node:path'
import { Finding } from '../test/fuzz/targets/harness'
import { TARGETS } from '../test/fuzz/targets/index'

const root = path.join(__dirname, '..')
const chosen = process.argv.slice(2)

async function prune (): Promise<void> {
  for (const [name, target] of Object.entries(TARGETS)) {
    if (chosen.length > 0 && !chosen.includes(name)) continue
    const corpus = path.join(root, 'test', 'fuzz', 'corpus', name)
    const findings = path.join(root, 'test', 'fuzz', 'findings', name)
    const kinds = new Map<string, number>()
    let kept = 0
    for (const file of fs.existsSync(corpus) ? fs.readdirSync(corpus).sort() : []) {
      try {
        await target.fuzz(fs.readFileSync(path.join(corpus, file)))
        kept++
      } catch (err) {
        const kind = err instanceof Finding ? err.kind : 'thrown'
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
        fs.mkdirSync(findings, { recursive: true })
        fs.renameSync(path.join(corpus, file), path.join(findings, 'open-' + file))
      }
    }
    const moved = [...kinds].map(([kind, count]) => `${count} ${kind}`).join(', ') || 'none'
    console.log(`${name}: ${kept} kept, moved out: ${moved}`)
  }
}

prune().then(() => { process.exit(0) }, (err: unknown) => {
  console.error(err)
  process.exit(1)
})
