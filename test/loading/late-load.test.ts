// No request's path loads a module: each entry's paths sent once with every late load failing (EMFILE), once recording them.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import path from 'node:path'
import { describe, it } from 'node:test'
import { promisify } from 'node:util'

const run = promisify(execFile)

interface PathAnswer {
  name: string
  valid: boolean
  charset: boolean
  expected?: { status: number, type?: string | null }
  retryOf?: string
  status: number
  type: string | null
  body: unknown
}

interface Run {
  paths: PathAnswer[]
  uncaught: string[]
  loadsByPath: Record<string, string[]>
}

async function runFixture (entry: string, mode: 'plain' | 'faulty'): Promise<Run> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(__dirname, 'late-load.ts'), entry, mode], {
    env: { ...process.env, DEBUG: '' },
    timeout: 240_000,
    maxBuffer: 16 * 1024 * 1024
  })
  return JSON.parse(stdout) as Run
}

/** An answer two runs can compare: the uploads folder (random per run) and multer's random file names left out of messages. */
function comparable (answer: PathAnswer): unknown {
  const text = JSON.stringify(answer.body).replace(/[^ '"]*bodykit-late-load-[^ '"]*/g, '<uploads>')
  return { status: answer.status, type: answer.type, body: JSON.parse(text) as unknown }
}

/** What a charset path may load: iconv-lite's encodings and their tables, and the built-in its internal codecs use. */
function isCharsetTable (module: string): boolean {
  return module.includes(`${path.sep}iconv-lite${path.sep}encodings${path.sep}`) || module === 'string_decoder'
}

const ENTRIES = ['index.ts', 'legacy.ts', 'multer.ts', 'koa.ts', 'nest.ts', 'hono.ts', 'web.ts']

describe('nothing loads while a request is read', () => {
  for (const entry of ENTRIES) {
    describe(entry, () => {
      // Both runs at once (separate processes with servers of their own), started by the first test: one entry at a time.
      let started: Promise<[Run, Run]> | undefined
      const runs = (): Promise<[Run, Run]> => (started ??= Promise.all([runFixture(entry, 'plain'), runFixture(entry, 'faulty')]))

      it('plain: every path answers what it is meant to, and loads nothing but a charset table', async () => {
        const [plain] = await runs()
        assert.deepEqual(plain.uncaught, [])
        for (const answer of plain.paths) {
          if (answer.expected === undefined) continue
          const { status, type } = answer.expected
          assert.deepEqual({ status: answer.status, type: type === undefined ? undefined : answer.type }, { status, type }, answer.name)
        }
        const charsetPaths = new Set(plain.paths.filter((answer) => answer.charset).map((answer) => answer.name))
        for (const [name, modules] of Object.entries(plain.loadsByPath)) {
          const late = charsetPaths.has(name) ? modules.filter((module) => !isCharsetTable(module)) : modules
          assert.deepEqual(late, [], `modules loaded on the path "${name}"`)
        }
      })

      it('faulty: no uncaught exception, every request answered as in plain, a charset that cannot load a 500 that a retry mends', async () => {
        const [plain, faulty] = await runs()
        // The fault is live: where plain mode loaded a charset table, faulty mode could not.
        if (Object.keys(plain.loadsByPath).length > 0) assert.ok(faulty.paths.some((answer) => answer.type === 'charset.load.failed'), 'no load failed')
        assert.deepEqual(faulty.uncaught, [])
        const plainAnswers = new Map(plain.paths.map((answer) => [answer.name, answer]))
        for (const answer of faulty.paths) {
          assert.notEqual(answer.status, 0, `${answer.name}: ${JSON.stringify(answer.body)}`)
          if (answer.valid) assert.ok(answer.status < 400 || answer.status >= 500, `${answer.name}: a valid body refused: ${JSON.stringify(answer.body)}`)
          const wanted = plainAnswers.get(answer.retryOf ?? answer.name)
          assert.ok(wanted !== undefined, answer.name)
          if (answer.charset && answer.status === 500 && answer.type === 'charset.load.failed') {
            assert.ok(faulty.paths.some((retry) => retry.retryOf === answer.name), `${answer.name}: sent again`)
            continue
          }
          assert.deepEqual(comparable(answer), comparable(wanted), answer.name)
        }
      })
    })
  }
})
