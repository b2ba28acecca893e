// The Chromium test files' shared set-up: one browser per file, and per entry a playground page served with bodykit and one with body-parser.
import assert from 'node:assert/strict'
import { after, before, describe } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { entries, type Entry } from '../hostile/helpers'
import { chromiumPath, inPage, launchChromium, openPlayground, skipReason, startPlayground, visible, type ParserModule, type Seen } from './drivers'

/** Runs an action on the bodykit page, then on the body-parser page; asserts they saw the same; returns bodykit's. */
export type Same = (act: (page: Page) => Promise<Seen>) => Promise<Seen>

/** One page per server: the playground with bodykit, and with body-parser. */
interface Side { page: Page, close: () => Promise<void> }

/**
 * Declares a suite that `define`s its tests for each entry (or the ones `only` names), skipped with a printed
 * reason when chromium is not installed.
 */
export function describeChromium (title: string, define: (entry: Entry, same: Same) => void, only?: Entry['name']): void {
  describe(title, { skip: skipReason('chromium', chromiumPath) }, () => {
    let browser: Browser
    before(async () => { browser = await launchChromium() })
    after(async () => { await browser?.close() })

    for (const entry of entries.filter((e) => only === undefined || e.name === only)) {
      describe(`${entry.name} entry vs ${entry.name === 'default' ? 'body-parser 2' : 'body-parser 1'}`, () => {
        let sides: Side[] = []
        before(async () => {
          sides = await Promise.all([entry.bodykit, entry.reference].map(async (parsers) => {
            const server = await startPlayground(parsers as unknown as ParserModule)
            return { page: await openPlayground(browser, server.url), close: server.close }
          }))
        })
        after(async () => {
          for (const side of sides) {
            await side.page.close()
            await side.close()
          }
        })
        define(entry, async (act) => {
          const mine = await act(sides[0].page)
          const reference = await act(sides[1].page)
          assert.deepEqual(visible(mine), visible(reference))
          return mine
        })
      })
    }
  })
}

/** Clicks a button of the page and reads the answer its result box then shows. */
export async function click (page: Page, button: string, box: string): Promise<Seen> {
  const count = Number(await page.getAttribute(box, 'data-count') ?? 0)
  await page.click(button)
  // The page counts its answers in data-count: wait for the next one, however long a loaded machine takes.
  await page.waitForFunction(`Number(document.querySelector(${JSON.stringify(box)}).dataset.count || 0) !== ${count}`, undefined, { timeout: 0 })
  const answer = JSON.parse(await page.getAttribute(box, 'data-result') as string) as { status: number }
  return { status: answer.status, answer }
}

/** An over-limit upload to the playground's 1 KB route by fetch, XHR or a form; the page must receive the 413. */
export async function uploadTooLarge (same: Same, how: 'fetch' | 'xhr' | 'form', size: number): Promise<void> {
  const seen = await same((page) => how === 'form'
    ? inPage(page, 'form', '/try/upload', [], {}, size)
    : inPage(page, 'send', how, '/try/upload', { size, type: 'application/octet-stream' }))
  assert.equal(seen.status, 413, seen.error)
  assert.equal((seen.answer as { type: string }).type, 'entity.too.large')
}
