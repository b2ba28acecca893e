// Starts bench/worker.ts children over IPC, waits for their messages, and makes sure none outlives the run.
import { fork, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import type { ChildMessage, ParentMessage } from './worker'

const live = new Set<ChildProcess>()
process.on('exit', () => { for (const child of live) child.kill('SIGKILL') })
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const child of live) child.kill('SIGKILL')
    process.exit(130)
  })
}

export interface Worker {
  send: (msg: ParentMessage) => void
  /** Resolves with the next message of that type; rejects if the child reports an error or exits first. */
  next: <T extends ChildMessage['type']>(type: T) => Promise<Extract<ChildMessage, { type: T }>>
  kill: () => void
}

export function startWorker (args: string[], execArgv: string[] = []): Worker {
  const child = fork(join(__dirname, 'worker.ts'), args, {
    execArgv: ['--import', 'tsx', ...execArgv],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  live.add(child)
  child.once('exit', () => live.delete(child))
  return {
    send: (msg) => { child.send(msg) },
    next: (type) => new Promise((resolve, reject) => {
      const onMessage = (msg: ChildMessage): void => {
        if (msg.type === 'error') finish(() => reject(new Error(msg.message)))
        else if (msg.type === type) finish(() => resolve(msg as Extract<ChildMessage, { type: typeof type }>))
      }
      const onExit = (code: number | null): void => finish(() => reject(new Error(`worker ${args.join(' ')} exited (${code})`)))
      const finish = (settle: () => void): void => {
        child.off('message', onMessage)
        child.off('exit', onExit)
        settle()
      }
      child.on('message', onMessage)
      child.once('exit', onExit)
    }),
    kill: () => { child.kill('SIGKILL') }
  }
}
