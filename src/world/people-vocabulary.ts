// Owns the names the worlds' people are made of: staff of one organisation,
// with logins and emails built from a first and a last name. Shared so that a
// person looks the same kind of specific in every world.

export const FIRST_NAMES = [
  'ines', 'tomasz', 'amara', 'kenji', 'lucia', 'oskar', 'priya', 'mateo',
  'yara', 'felix', 'noor', 'dmitri', 'hana', 'rafael', 'sigrid', 'tariq',
] as const;

export const LAST_NAMES = [
  'okafor', 'lindqvist', 'moreau', 'tanaka', 'ferreira', 'novak', 'haddad', 'brennan',
  'castillo', 'weber', 'achebe', 'kowalski', 'sato', 'ionescu', 'dalton', 'rahman',
] as const;

export const ORGANISATIONS = ['northwind', 'brightline', 'quillmark', 'harborlight', 'fennick', 'ostrava'] as const;
