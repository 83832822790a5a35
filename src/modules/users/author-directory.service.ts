import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { SqlConnection, SqlStatement } from '../../common/sql/sql-connection.js';
import type { DataSource } from 'typeorm';
import { connectionOf, PLATFORM_DB } from '../../database/databases.js';

/**
 * The one wire shape of a person shown beside their content (a comment's author, a leaderboard
 * row): public fields only, never the email.
 */
export interface AuthorView {
  id: string;
  username: string;
  display_name: string | null;
}

/**
 * Looks up the authors of many records at once (their users live in the platform database,
 * the records in their world's). `publicOnly` leaves out PRIVATE profiles (public lists).
 */
@Injectable()
export class AuthorDirectory {
  private readonly db: SqlConnection;
  private readonly publicAmong: SqlStatement;
  private readonly among: SqlStatement;
  private readonly publicAuthorsAmong: SqlStatement;

  constructor(@InjectDataSource(PLATFORM_DB) platform: DataSource) {
    this.db = connectionOf(platform);
    // The ids travel as one JSON array: one query however many (no bound-parameter limit).
    this.publicAmong = this.db.prepare(
      `SELECT id FROM users WHERE profile_visibility = 'PUBLIC' AND id IN (SELECT value FROM json_each(?))`,
    );
    const authors =
      'SELECT id, username, display_name FROM users WHERE id IN (SELECT value FROM json_each(?))';
    this.among = this.db.prepare(authors);
    this.publicAuthorsAmong = this.db.prepare(`${authors} AND profile_visibility = 'PUBLIC'`);
  }

  /** Which of `ids` have a PUBLIC profile (a public list's members), in one query. */
  publicIds(ids: Iterable<string>): Set<string> {
    const rows = this.publicAmong.all(JSON.stringify([...new Set(ids)])) as { id: string }[];
    return new Set(rows.map((r) => r.id));
  }

  authors(ids: Iterable<string>, opts: { publicOnly?: boolean } = {}): Map<string, AuthorView> {
    const stmt = opts.publicOnly === true ? this.publicAuthorsAmong : this.among;
    const rows = stmt.all(JSON.stringify([...new Set(ids)])) as AuthorView[];
    return new Map(rows.map((r) => [r.id, r]));
  }
}
