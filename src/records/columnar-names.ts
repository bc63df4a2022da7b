// Owns the names of the columnar copies of a dataset, apart from the code that
// writes them, so naming a file does not load Arrow and Parquet.

export const ARROW_FILE = 'episodes.arrow';
export const PARQUET_FILE = 'episodes.parquet';
export const COLUMNAR_FORMATS = ['arrow', 'parquet'] as const;
export type ColumnarFormat = (typeof COLUMNAR_FORMATS)[number];
