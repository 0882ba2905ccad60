import fc from 'fast-check';
import { EMAIL_MAX, emailProblem, parsePhone, PHONE_MAX, WEBSITE_MAX, websiteProblem } from './contact-fields.js';

describe('a phone number', () => {
  it.each([
    '(913) 555-0142',
    '913-555-0142',
    '913.555.0142',
    '9135550142',
    '913 555 0142',
    '+1 913 555 0142',
    '+19135550142',
    '+1-913-555-0142',
    '+1 (913) 555-0142',
    '1-913-555-0142',
    '1 (913) 555-0142',
    '19135550142',
    '(913)555-0142',
  ])('takes %p as +19135550142', (text) => {
    expect(parsePhone(text)).toEqual({ phone: '+19135550142' });
  });

  it('keeps every digit where it belongs: area code, exchange, line', () => {
    expect(parsePhone('(212) 987-6543')).toEqual({ phone: '+12129876543' });
    expect(parsePhone('1-787-200-0001')).toEqual({ phone: '+17872000001' });
  });

  it.each([
    ['1-800-FLOWERS', 'is not a US phone number'],
    ['913-555-O142', 'is not a US phone number'],
    ['+44 20 7946 0958', 'is not a US phone number'],
    ['+52 55 1234 5678', 'is not a US phone number'],
    ['+9135550142', 'is not a US phone number'],
    ['555-0142', 'is not a US phone number'],
    ['913555014', 'is not a US phone number'],
    ['91355501420', 'is not a US phone number'],
    ['119135550142', 'is not a US phone number'],
    ['+1 913 555 0142 x12', 'is not a US phone number'],
    ['913--555-0142', 'is not a US phone number'],
    ['(913 555-0142', 'is not a US phone number'],
    ['913 555 0142\n', 'is not a US phone number'],
    ['１９１３５５５０１４２', 'is not a US phone number'],
    ['(013) 555-0142', 'has no US area code: 013 does not start with 2 to 9'],
    ['+1 113 555 0142', 'has no US area code: 113 does not start with 2 to 9'],
    ['1913555014', 'has no US area code: 191 does not start with 2 to 9'],
    ['913-055-0142', 'its exchange 055 does not start with 2 to 9'],
    ['913-155-0142', 'its exchange 155 does not start with 2 to 9'],
  ])('refuses %p, saying it %s', (text, reason) => {
    const parsed = parsePhone(text);
    expect('reason' in parsed && parsed.reason).toContain(reason);
    expect('reason' in parsed && parsed.reason).toContain(`"${text}"`);
  });

  it('gives a number that fits its column, and that it takes back as itself', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[2-9]\d{2}[2-9]\d{6}$/), fc.constantFrom('', '1', '+1', '1-', '+1 '), (digits, prefix) => {
        const parsed = parsePhone(`${prefix}${digits}`);
        expect(parsed).toEqual({ phone: `+1${digits}` });
        const phone = (parsed as { phone: string }).phone;
        expect(phone.length).toBeLessThanOrEqual(PHONE_MAX);
        expect(parsePhone(phone)).toEqual({ phone });
      }),
    );
  });

  it('answers any text with a number or a reason, never a throw', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (text) => {
        const parsed = parsePhone(text);
        if ('phone' in parsed) expect(parsed.phone).toMatch(/^\+1[2-9]\d{2}[2-9]\d{6}$/);
        else expect(parsed.reason).toMatch(/^".*" /s);
      }),
    );
  });
});

describe('a website', () => {
  it.each([
    'https://example.com',
    'https://example.com/',
    'HTTPS://Example.COM/Stores?id=42#hours',
    'https://fernandfig.example/chelsea',
    'https://www.fern-and-fig.co.uk:8443/a/b%20c;d=e',
    'https://xn--bcher-kva.example/',
    'https://bücher.example/',
    "https://example.com/path/with-(parens)_and~tilde!$&'*+,=:@",
  ])('takes %p', (text) => {
    expect(websiteProblem(text)).toBeNull();
  });

  it.each([
    ['http://example.com', 'is not an https address'],
    ['javascript:alert(1)', 'is not an https address'],
    ['JavaScript://example.com/%0Aalert(1)', 'is not an https address'],
    ['data:text/html,<script>alert(1)</script>', 'is not an https address'],
    ['//example.com', 'is not an https address'],
    ['example.com', 'is not an https address'],
    [' https://example.com', 'is not an https address'],
    ['https://', 'is not a web address'],
    ['https:///path', 'is not a web address'],
    ['https://localhost/', 'is not a web address'],
    ['https://192.0.2.1/', 'is not a web address'],
    ['https://[2001:db8::1]/', 'is not a web address'],
    ['https://user:secret@example.com/', 'is not a web address'],
    ['https://bank.example@evil.example/', 'is not a web address'],
    ['https://exa mple.com/', 'is not a web address'],
    ['https://example.com/a b', 'is not a web address'],
    ['https://example.com/"><script>', 'is not a web address'],
    ['https://example.com/%zz', 'is not a web address'],
    ['https://-example.com/', 'is not a web address'],
    ['https://example.com:123456/', 'is not a web address'],
    ['https://example.com\\@evil.example', 'is not a web address'],
  ])('refuses %p, saying it %s', (text, reason) => {
    expect(websiteProblem(text)).toContain(reason);
  });

  it(`refuses more than ${WEBSITE_MAX} characters, and takes ${WEBSITE_MAX}`, () => {
    const base = 'https://example.com/';
    expect(websiteProblem(base + 'a'.repeat(WEBSITE_MAX - base.length))).toBeNull();
    expect(websiteProblem(base + 'a'.repeat(WEBSITE_MAX - base.length + 1))).toBe(`is longer than ${WEBSITE_MAX} characters`);
  });
});

describe('an email address', () => {
  it.each([
    'shop@example.com',
    'Chelsea.Store@Fern-And-Fig.example',
    'orders+plants@example.co.uk',
    "o'brien@example.com",
    '=cmd@example.com',
    'a@b.cd',
    `${'l'.repeat(64)}@example.com`,
  ])('takes %p', (text) => {
    expect(emailProblem(text)).toBeNull();
  });

  it.each([
    'shop',
    'shop@',
    '@example.com',
    'shop@example',
    'shop@localhost',
    'shop@@example.com',
    'shop@exa mple.com',
    'sh op@example.com',
    '.shop@example.com',
    'shop.@example.com',
    'sh..op@example.com',
    '"shop"@example.com',
    'shop@[192.0.2.1]',
    'shop@192.0.2.1',
    'shop@example.com>',
    '<shop@example.com>',
    'Shop <shop@example.com>',
    'shop@example.com, other@example.com',
    `${'l'.repeat(65)}@example.com`,
  ])('refuses %p', (text) => {
    expect(emailProblem(text)).toBe(`"${text}" is not an email address like shop@example.com`);
  });

  it(`takes ${EMAIL_MAX} characters, and refuses more`, () => {
    const domain = `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(62)}.com`;
    expect(`shop@${domain}`).toHaveLength(EMAIL_MAX);
    expect(emailProblem(`shop@${domain}`)).toBeNull();
    expect(emailProblem(`shops@${domain}`)).toBe(`is longer than ${EMAIL_MAX} characters`);
  });
});
