import { readPage } from './api.js';

const number = new Intl.NumberFormat('en');

/**
 * A list shown a page at a time, with what is shown said in words: "Units 1–100, more follow" until the last page,
 * "Units 201–250 of 250" on it, so a part is never taken for the whole. It keeps the addresses of the pages seen,
 * so Previous goes back without the service knowing of pages behind. Its controls are `#<id>-count`,
 * `#<id>-previous` and `#<id>-next`.
 */
export class Pager<Item> {
  private pages: { href: string; first: number }[] = [];
  private index = 0;
  /** The page the latest request asked for, and that request's number: an answer to an older request is dropped. */
  private wanted = 0;
  private requests = 0;
  private next: string | undefined;
  private shown = 0;

  constructor(
    private readonly id: string,
    private readonly rel: string,
    private readonly noun: string,
    private readonly show: (items: Item[]) => void,
  ) {
    this.control('previous').addEventListener('click', () => void this.load(this.index - 1));
    this.control('next').addEventListener('click', () => void this.forward());
  }

  start(href: string): Promise<void> {
    this.pages = [{ href, first: 0 }];
    return this.load(0);
  }

  /** The page on show read again, e.g. after a change; while another page is being read, that one. */
  reload(): Promise<void> {
    return this.load(this.wanted);
  }

  private forward(): Promise<void> {
    const here = this.pages[this.index];
    if (!here || this.next === undefined) return Promise.resolve();
    this.pages[this.index + 1] = { href: this.next, first: here.first + this.shown };
    return this.load(this.index + 1);
  }

  private async load(index: number): Promise<void> {
    const page = this.pages[index];
    if (!page) return;
    const request = ++this.requests;
    this.wanted = index;
    const { items, next } = await readPage<Item>(page.href, this.rel);
    // A refresh started before a click on Next must not answer after it and put the first page back.
    if (request !== this.requests) return;
    this.index = index;
    this.next = next;
    this.shown = items.length;
    this.show(items);
    const last = page.first + items.length;
    const range = `${this.noun} ${number.format(page.first + 1)}–${number.format(last)}`;
    this.control('count').textContent =
      items.length === 0 ? `No ${this.noun}.` : next ? `${range}, more follow` : `${range} of ${number.format(last)}`;
    (this.control('previous') as HTMLButtonElement).disabled = index === 0;
    (this.control('next') as HTMLButtonElement).disabled = next === undefined;
  }

  private control(name: string): HTMLElement {
    return document.getElementById(`${this.id}-${name}`)!;
  }
}
