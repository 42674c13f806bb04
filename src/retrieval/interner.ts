/** Strings many rows share (repos, languages, paths, file hashes), stored once each. */
export class Interner {
  private readonly codes = new Map<string, number>();
  private readonly values: string[] = [];

  code(value: string): number {
    let code = this.codes.get(value);
    if (code === undefined) {
      code = this.values.length;
      this.codes.set(value, code);
      this.values.push(value);
    }
    return code;
  }

  find(value: string): number | undefined {
    return this.codes.get(value);
  }

  value(code: number): string {
    return this.values[code]!;
  }

  get count(): number {
    return this.values.length;
  }
}
