// Run by filesystem.test.ts in a child process: disk uploads under a real fault the child cannot escape (a low descriptor limit set on itself, or a folder its user may not write), reporting what each upload's next got and what was left, as one JSON line.
import { execFileSync } from 'node:child_process'
import bodykit from '../../src/index'
import multer from '../../src/multer'
import {
  eventually, fieldPart, filePart, formRequest, listFolder, multerMiddleware, openFds, playNode, removeStored, seededBytes,
  sleep, type ErrorLike, type Middleware
} from './harness'

/** `emfile`: 40 uploads at once under a descriptor limit a few above what is open; `eacces`: uploads to a folder this user may not write. */
const [scenario, folder, target] = process.argv.slice(2) as ['emfile' | 'eacces', string, 'multipart' | 'multer']
/** Descriptors left free under the limit: some uploads open their files, the others meet EMFILE. */
const HEADROOM = 6

const uncaught: string[] = []
process.on('uncaughtException', (err) => { uncaught.push(String((err as Error)?.stack ?? err).split('\n')[0]) })
process.on('unhandledRejection', (err) => { uncaught.push(String((err as Error)?.stack ?? err).split('\n')[0]) })

export interface ChildReport {
  scenario: string
  target: string
  outcomes: Array<{ settled: boolean, calls: number, status: number | null, code: string | null }>
  uncaught: string[]
  left: string[]
  fdsBefore: number
  fdsAfter: number
  /** What making the storage threw (multer's diskStorage creates its folder at once). */
  creationError: string | null
}

/** The injected or real errno an error carries, itself or as its cause. */
function codeOf (err: unknown): string | null {
  const e = err as ErrorLike | undefined
  return e?.code ?? e?.cause?.code ?? null
}

async function main (): Promise<void> {
  let creationError: string | null = null
  // Only where the folder refuses it: made under a writable folder, it would be a file left there.
  if (target === 'multer' && scenario === 'eacces') {
    try {
      multer.diskStorage({ destination: folder + '/created-by-multer' })
    } catch (err) {
      creationError = codeOf(err)
    }
  }
  const mw: Middleware = target === 'multer' ? multerMiddleware('disk', folder) : bodykit.multipart({ files: { storage: 'disk', directory: folder } }) as unknown as Middleware
  const body = formRequest([fieldPart('name', 'child'), filePart('first', 'a.bin', seededBytes(64 * 1024, 1)), filePart('second', 'b.bin', seededBytes(64 * 1024, 2))])
  const fdsBefore = openFds()
  const count = scenario === 'emfile' ? 40 : 4
  if (scenario === 'emfile') {
    const limit = String(fdsBefore + HEADROOM)
    execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${limit}:${limit}`])
  }
  const runs = await Promise.all(Array.from({ length: count }, () => playNode(mw, body, 'incoming', null)))
  await sleep(20)
  const outcomes = runs.map((run) => {
    const err = run.state.err as ErrorLike | undefined
    if (err === undefined) removeStored(run.handedOn())
    return { settled: run.settled, calls: run.state.calls, status: err === undefined ? 200 : err.status ?? err.statusCode ?? 500, code: codeOf(err) }
  })
  await eventually(() => listFolder(folder).length === 0)
  await eventually(() => openFds() <= fdsBefore)
  const report: ChildReport = { scenario, target, outcomes, uncaught, left: listFolder(folder), fdsBefore, fdsAfter: openFds(), creationError }
  process.stdout.write(JSON.stringify(report) + '\n')
}

main().catch((err: unknown) => {
  process.stdout.write(JSON.stringify({ crashed: String((err as Error)?.stack ?? err) }) + '\n')
})
