// A throwaway self-signed certificate for 127.0.0.1 and localhost, made with openssl, for the HTTP/2 playground and tests.
'use strict'
const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

/**
 * Makes a key and a certificate valid for a day (EC P-256, so it is quick); returns them as PEM text.
 * Browsers and curl must be told to accept it (`--ignore-certificate-errors`, `curl -k`): it is for trying
 * things on this machine only.
 */
function createSelfSignedCertificate () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-cert-'))
  try {
    const key = path.join(dir, 'key.pem')
    const cert = path.join(dir, 'cert.pem')
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'pipe' })
    return { key: fs.readFileSync(key, 'utf8'), cert: fs.readFileSync(cert, 'utf8') }
  } catch (err) {
    throw new Error('HTTP/2 over TLS needs a certificate, made here with openssl, which failed: ' + err.message)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

module.exports = { createSelfSignedCertificate }
