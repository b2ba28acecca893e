// The playground's multipart card in headless Chromium: a real form with a file input, its 200 and its 413.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import bodykit from '../../src/index'
import legacy from '../../src/legacy'
import { chromiumPath, launchChromium, openPlayground, skipReason, startPlayground, type ParserModule } from '../clients/drivers'

describe('playground card 7: a form with a file', { skip: skipReason('chromium', chromiumPath) }, () => {
  let browser: Browser
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-playground-'))
  before(async () => { browser = await launchChromium() })
  after(async () => {
    await browser?.close()
    fs.rmSync(folder, { recursive: true, force: true })
  })

  /** Submits the card's form with a file of `size` bytes and returns the answer the page shows. */
  async function submit (page: Page, size: number): Promise<{ status: number, type: string | null, body?: unknown, files?: unknown }> {
    const file = path.join(folder, 'photo-' + size + '.jpg')
    fs.writeFileSync(file, Buffer.alloc(size, 7))
    const count = Number(await page.getAttribute('#out-multipart', 'data-count') ?? 0)
    await page.setInputFiles('#multipart-file', file)
    await page.click('#send-multipart')
    // The page counts its answers in data-count; wait for the next one.
    await page.waitForFunction(`Number(document.getElementById('out-multipart').dataset.count || 0) > ${count}`, undefined, { timeout: 0 })
    return JSON.parse(await page.getAttribute('#out-multipart', 'data-result') as string)
  }

  for (const [name, entry] of [['default', bodykit], ['legacy', legacy]] as const) {
    it(`${name} entry: the fields and the file, then a file over 100 KB refused with 413`, async () => {
      const server = await startPlayground(entry as unknown as ParserModule)
      const page = await openPlayground(browser, server.url)
      try {
        const small = await submit(page, 2048)
        assert.deepEqual(small, {
          status: 200,
          type: null,
          body: { title: 'Holiday 🏖' },
          files: [{ fieldName: 'photo', originalName: 'photo-2048.jpg', mimeType: 'image/jpeg', size: 2048 }]
        })
        const large = await submit(page, 200 * 1024)
        assert.equal(large.status, 413)
        assert.equal(large.type, 'multipart.file.too.large')
      } finally {
        await page.close()
        await server.close()
      }
    })
  }
})
