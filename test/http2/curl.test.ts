// Issue 17: curl over HTTP/2 (h2c with prior knowledge, and TLS with a certificate made at test time) against both
// entries; `-T -` sends no Content-Length and must get body-parser's answer to the same bytes sent with one.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import zlib from 'node:zlib'
import { curlPath, skipReason } from '../clients/drivers'
import { entries as allEntries, type Factories } from '../hostile/helpers'
import { comparableJson, serveH2, type H2Server, type Middleware, withHttp2Reading } from './helpers'

// bodykit's reading of HTTP/2 bodies without a length, on in both entries (bodykit/legacy's default is off).
const entries = withHttp2Reading(allEntries, true)

const MiB = 1024 * 1024

function routesOf (parsers: Factories): Record<string, Middleware[]> {
  return {
    '/json': [parsers.json()],
    '/form': [parsers.urlencoded({ extended: false })],
    '/small': [parsers.raw({ type: () => true, limit: '1kb' })]
  }
}

interface CurlAnswer { exit: number, status: number, version: string, json: Record<string, unknown> | null, stderr: string }

/** Runs curl (stdin from `input`) and reads the status and HTTP version it printed after the body. */
function curl (args: string[], input?: Buffer): Promise<CurlAnswer> {
  return new Promise((resolve) => {
    const child = execFile(curlPath as string, ['-sS', '-w', '\n%{http_code} %{http_version}', ...args], { timeout: 60_000, maxBuffer: 16 * MiB }, (err, stdout, stderr) => {
      const lines = stdout.split('\n')
      const [status, version] = (lines.pop() as string).split(' ')
      let json: Record<string, unknown> | null = null
      try { json = JSON.parse(lines.join('\n')) } catch { json = null }
      resolve({ exit: err ? Number(err.code) : 0, status: Number(status), version, json, stderr })
    })
    child.stdin?.on('error', () => {}) // curl may stop reading stdin once it has its answer
    child.stdin?.end(input ?? '')
  })
}

/** What two answers must share; `received` of a 413 depends on how the bytes arrived, and the length on having one. */
function comparable (answer: CurlAnswer, sentLength: boolean): unknown {
  return { exit: answer.exit, status: answer.status, version: answer.version, json: answer.json === null ? null : comparableJson(answer.json, sentLength) }
}

describe('curl over HTTP/2', { skip: skipReason('curl', curlPath) }, () => {
  let files: string
  before(() => { files = mkdtempSync(path.join(os.tmpdir(), 'bodykit-curl-')) })
  after(() => rmSync(files, { recursive: true, force: true }))

  for (const tls of [false, true]) {
    for (const entry of entries) {
      describe(`${tls ? '--http2 over TLS' : '--http2-prior-knowledge (h2c)'}, ${entry.name} entry vs ${entry.name === 'default' ? 'body-parser 2' : 'body-parser 1'}`, () => {
        let mine: H2Server, reference: H2Server
        before(async () => {
          mine = await serveH2(routesOf(entry.bodykit), { tls })
          reference = await serveH2(routesOf(entry.reference), { tls })
        })
        after(async () => {
          await mine.close()
          await reference.close()
        })
        const protocol = tls ? ['--http2', '-k'] : ['--http2-prior-knowledge']

        it('-d: JSON and a form (with a length), as body-parser', async () => {
          for (const [route, type, data] of [['/json', 'application/json', '{"curl":["é",1]}'], ['/form', 'application/x-www-form-urlencoded', 'a=1&b=%C3%A9']]) {
            const args = [...protocol, '-H', 'content-type: ' + type, '-d', data]
            const answer = await curl([...args, mine.origin + route])
            assert.deepEqual(comparable(answer, true), comparable(await curl([...args, reference.origin + route]), true))
            assert.equal(answer.version, '2')
            assert.equal(answer.status, 200)
          }
        })

        it('-T - from stdin (no Content-Length): bodykit parses what body-parser parses with a length', async () => {
          const cases: Array<[string, string, Buffer]> = [
            ['/json', 'application/json', Buffer.from('{"streamed":{"from":"stdin","n":[1,2,3]}}')],
            ['/form', 'application/x-www-form-urlencoded', Buffer.from('x=1&x=2&y=%E6%BC%A2')],
            ['/json', 'application/json', Buffer.from('{"broken":')]
          ]
          for (const [route, type, data] of cases) {
            const streamed = await curl([...protocol, '-X', 'POST', '-H', 'content-type: ' + type, '-T', '-', mine.origin + route], data)
            const file = path.join(files, 'body')
            writeFileSync(file, data)
            const withLength = await curl([...protocol, '-H', 'content-type: ' + type, '--data-binary', '@' + file, reference.origin + route])
            assert.deepEqual(comparable(streamed, true), comparable(withLength, false))
            assert.notEqual(streamed.json, null)
          }
        })

        it('--data-binary @file, gzip-compressed, as body-parser', async () => {
          const file = path.join(files, 'body.gz')
          writeFileSync(file, zlib.gzipSync(JSON.stringify({ zipped: 'x'.repeat(5000) })))
          const args = [...protocol, '-H', 'content-type: application/json', '-H', 'content-encoding: gzip', '--data-binary', '@' + file]
          const answer = await curl([...args, mine.origin + '/json'])
          assert.deepEqual(comparable(answer, true), comparable(await curl([...args, reference.origin + '/json']), true))
          assert.equal(answer.status, 200)
        })

        it('5 MiB to the 1 KiB route, with @file and with -T -: a 413 that curl receives, exit code 0', async () => {
          const file = path.join(files, 'big')
          writeFileSync(file, Buffer.alloc(5 * MiB, 'a'))
          const fromFile = await curl([...protocol, '-H', 'content-type: application/octet-stream', '--data-binary', '@' + file, mine.origin + '/small'])
          const expected = await curl([...protocol, '-H', 'content-type: application/octet-stream', '--data-binary', '@' + file, reference.origin + '/small'])
          assert.deepEqual(comparable(fromFile, true), comparable(expected, true), fromFile.stderr + expected.stderr)
          assert.equal(fromFile.status, 413, fromFile.stderr)
          const streamed = await curl([...protocol, '-X', 'POST', '-H', 'content-type: application/octet-stream', '-T', '-', mine.origin + '/small'], Buffer.alloc(5 * MiB, 'a'))
          const withLength = await curl([...protocol, '-H', 'content-type: application/octet-stream', '--data-binary', '@' + file, reference.origin + '/small'])
          assert.deepEqual(comparable(streamed, true), comparable(withLength, false), streamed.stderr)
          assert.equal(streamed.status, 413, streamed.stderr)
          assert.equal(streamed.exit, 0, streamed.stderr)
        })
      })
    }
  }
})
