import { describe, expect, it } from 'vitest'
import { classify } from '../../../src/credentials/keychain-store.js'

describe('keychain error classes', () => {
  it('tells locked from unavailable', () => {
    expect(
      classify(new Error("Couldn't access platform storage: Secret Service: unlock prompt was dismissed")).problem,
    ).toBe('locked')
    expect(
      classify(new Error('Platform failure: DBus error: Using X11 for dbus-daemon autolaunch was disabled')).problem,
    ).toBe('unavailable')
    expect(
      classify(
        new Error(
          'Platform failure: DBus error: The name org.freedesktop.secrets was not provided by any .service files',
        ),
      ).problem,
    ).toBe('unavailable')
  })
})
