/** "1 flag", "2 flags", "0 flags": a count with its noun (English plural by -s, or the plural given). */
export const plural = (count: number, noun: string, nouns = `${noun}s`) => `${count} ${count === 1 ? noun : nouns}`
