/** Tables of the gitops part. */
export const sql = `
SELECT 1;
`;
