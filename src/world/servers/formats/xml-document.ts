// Owns the small XML reader and writer the office formats need: a careful
// tokenizer that builds an element tree (names, attributes, text with the five
// named entities and numeric character references resolved), and escaping for
// text and attribute values written back. It reads no DTD and expands no
// entity it does not know, so a file cannot make it grow without bound.

import { FactoryError } from '../../../core/errors.js';

export interface XmlElement {
  /** The qualified name as written, e.g. `sheet` or `x14ac:dyDescent`. */
  name: string;
  /** The name without its prefix. */
  local: string;
  attributes: Record<string, string>;
  children: XmlNode[];
}

export type XmlNode = XmlElement | string;

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function malformed(where: string, at: number, message: string): FactoryError {
  return new FactoryError('server_failed', `${where}: malformed XML at offset ${at}: ${message}`, { fix: 'the file is not well-formed XML; recreate it or check what the server wrote' });
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}

/** `text` with entity and character references resolved; `where` and `at` name the place in an error. */
function decodeEntities(text: string, where: string, at: number): string {
  if (!text.includes('&')) return text;
  return text.replace(/&([^;&\s]*);?/g, (match, body: string) => {
    if (!match.endsWith(';')) throw malformed(where, at, `unterminated reference ${JSON.stringify(match)}`);
    if (body in NAMED_ENTITIES) return NAMED_ENTITIES[body]!;
    const numeric = /^#(?:x([0-9A-Fa-f]+)|([0-9]+))$/.exec(body);
    if (numeric) {
      const code = numeric[1] !== undefined ? parseInt(numeric[1], 16) : parseInt(numeric[2]!, 10);
      if (code > 0x10ffff || code === 0 || (code >= 0xd800 && code <= 0xdfff)) throw malformed(where, at, `character reference ${match} is not a character`);
      return String.fromCodePoint(code);
    }
    throw malformed(where, at, `unknown entity ${JSON.stringify(match)}`);
  });
}

const NAME = /[A-Za-z_:][-A-Za-z0-9_:.\u00b7\u00c0-\uffff]*/y;

/**
 * Parses `source` into its root element. Comments, processing instructions
 * and the XML declaration are skipped; CDATA becomes text; a DOCTYPE is
 * refused. Line ends are normalised to `\n` as the XML rules say.
 */
export function parseXml(source: string, where: string): XmlElement {
  const text = source.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let at = 0;

  const readName = (): string => {
    NAME.lastIndex = at;
    const match = NAME.exec(text);
    if (!match) throw malformed(where, at, 'expected a name');
    at = NAME.lastIndex;
    return match[0];
  };
  const skipSpace = (): void => {
    while (at < text.length && /\s/.test(text[at]!)) at++;
  };
  const addText = (value: string): void => {
    const parent = stack[stack.length - 1];
    if (parent) parent.children.push(value);
    else if (value.trim() !== '') throw malformed(where, at, 'text outside the root element');
  };

  while (at < text.length) {
    const open = text.indexOf('<', at);
    if (open === -1) {
      addText(decodeEntities(text.slice(at), where, at));
      break;
    }
    if (open > at) addText(decodeEntities(text.slice(at, open), where, at));
    at = open;
    if (text.startsWith('<!--', at)) {
      const close = text.indexOf('-->', at + 4);
      if (close === -1) throw malformed(where, at, 'unterminated comment');
      at = close + 3;
    } else if (text.startsWith('<![CDATA[', at)) {
      const close = text.indexOf(']]>', at + 9);
      if (close === -1) throw malformed(where, at, 'unterminated CDATA section');
      addText(text.slice(at + 9, close));
      at = close + 3;
    } else if (text.startsWith('<?', at)) {
      const close = text.indexOf('?>', at + 2);
      if (close === -1) throw malformed(where, at, 'unterminated processing instruction');
      at = close + 2;
    } else if (text.startsWith('<!', at)) {
      throw malformed(where, at, 'document type declarations are not read');
    } else if (text.startsWith('</', at)) {
      at += 2;
      const name = readName();
      skipSpace();
      if (text[at] !== '>') throw malformed(where, at, `expected ">" to close </${name}`);
      at++;
      const element = stack.pop();
      if (!element || element.name !== name) throw malformed(where, at, `</${name}> closes ${element ? `<${element.name}>` : 'nothing'}`);
    } else {
      at++;
      const name = readName();
      const element: XmlElement = { name, local: localName(name), attributes: {}, children: [] };
      for (;;) {
        const before = at;
        skipSpace();
        if (text.startsWith('/>', at) || text[at] === '>') break;
        if (at === before) throw malformed(where, at, `expected whitespace before an attribute of <${name}>`);
        const attribute = readName();
        skipSpace();
        if (text[at] !== '=') throw malformed(where, at, `attribute ${attribute} of <${name}> has no value`);
        at++;
        skipSpace();
        const quote = text[at];
        if (quote !== '"' && quote !== "'") throw malformed(where, at, `attribute ${attribute} of <${name}> is not quoted`);
        const close = text.indexOf(quote, at + 1);
        if (close === -1) throw malformed(where, at, `attribute ${attribute} of <${name}> is not closed`);
        const raw = text.slice(at + 1, close);
        if (raw.includes('<')) throw malformed(where, at, `attribute ${attribute} of <${name}> contains "<"`);
        if (attribute in element.attributes) throw malformed(where, at, `attribute ${attribute} of <${name}> given twice`);
        // Attribute-value normalisation: literal whitespace characters become spaces; references keep theirs.
        element.attributes[attribute] = decodeEntities(raw.replace(/[\t\n]/g, ' '), where, at);
        at = close + 1;
      }
      const parent = stack[stack.length - 1];
      if (parent) parent.children.push(element);
      else if (root) throw malformed(where, at, 'a second root element');
      else root = element;
      if (text.startsWith('/>', at)) {
        at += 2;
      } else {
        at++;
        stack.push(element);
      }
    }
  }
  if (stack.length > 0) throw malformed(where, at, `<${stack[stack.length - 1]!.name}> is never closed`);
  if (!root) throw malformed(where, at, 'no root element');
  return root;
}

/** The value of the attribute whose name without prefix is `local` (namespace declarations aside). */
export function attributeOf(element: XmlElement, local: string): string | undefined {
  if (local in element.attributes) return element.attributes[local];
  for (const [name, value] of Object.entries(element.attributes)) {
    if (!name.startsWith('xmlns') && localName(name) === local) return value;
  }
  return undefined;
}

export function childElements(element: XmlElement, local?: string): XmlElement[] {
  return element.children.filter((child): child is XmlElement => typeof child !== 'string' && (local === undefined || child.local === local));
}

export function firstChild(element: XmlElement, local: string): XmlElement | undefined {
  return childElements(element, local)[0];
}

/** The text directly inside `element` (its own text nodes, not its descendants'). */
export function ownText(element: XmlElement): string {
  return element.children.filter((child): child is string => typeof child === 'string').join('');
}

/** `value` safe as element text: `&`, `<`, `>` and the line-end characters a reader would otherwise change. */
export function escapeXmlText(value: string): string {
  return value.replace(/[&<>\r]/g, (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#xD;' })[character]!);
}

/** `value` safe inside a double-quoted attribute, whitespace kept as references so a reader's normalisation leaves it alone. */
export function escapeXmlAttribute(value: string): string {
  return value.replace(/[&<>"\t\n\r]/g, (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\t': '&#x9;', '\n': '&#xA;', '\r': '&#xD;' })[character]!);
}

/** Refuses a string XML 1.0 cannot hold (control characters other than tab and line ends, lone surrogates). */
export function isXmlSafe(value: string): boolean {
  return !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(value);
}
