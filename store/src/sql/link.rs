//! The writer's connection to its database ([`Link`]), one per kind of store:
//!
//! - [`Pooled`]: a connection held out of the sqlx pool (PostgreSQL), each statement
//!   a round trip to the server anyway.
//! - [`Embedded`]: one blocking SQLite connection of the writer's own, on the thread
//!   the writer runs on. Through sqlx each statement hopped to its driver's worker
//!   thread and back; a batch's few statements and its commit now run back to back,
//!   which on a loaded machine was most of a batch's time.
//!
//! Statements are written once for both, with numbered parameters (`$1`) as both
//! databases read them, and bound from [`Arg`]s; the writer's multi-row statements
//! are spelled for each ([`Dialect`]).

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use rusqlite::types::{Null, ValueRef};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyPool, Executor as _, Row as _};

/// A statement's parameter.
#[derive(Debug)]
pub(super) enum Arg<'a> {
    /// A number (the stores keep numbers as BIGINT, flags as 0/1).
    Int(i64),
    /// Text, borrowed where the caller holds it.
    Text(Cow<'a, str>),
    /// A NULL where a number goes (PostgreSQL types each parameter).
    NullInt,
    /// A NULL where text goes.
    NullText,
}

impl From<i64> for Arg<'_> {
    fn from(value: i64) -> Self {
        Self::Int(value)
    }
}

impl From<Option<i64>> for Arg<'_> {
    fn from(value: Option<i64>) -> Self {
        value.map_or(Self::NullInt, Self::Int)
    }
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(value: &'a str) -> Self {
        Self::Text(Cow::Borrowed(value))
    }
}

impl From<String> for Arg<'_> {
    fn from(value: String) -> Self {
        Self::Text(Cow::Owned(value))
    }
}

impl<'a> From<Option<&'a str>> for Arg<'a> {
    fn from(value: Option<&'a str>) -> Self {
        value.map_or(Self::NullText, Self::from)
    }
}

impl From<Option<String>> for Arg<'_> {
    fn from(value: Option<String>) -> Self {
        value.map_or(Self::NullText, Self::from)
    }
}

/// One column of a row read back.
#[derive(Debug)]
enum Cell {
    Null,
    Int(i64),
    Text(String),
}

/// A row read back, its columns in the statement's order.
#[derive(Debug)]
pub(super) struct Row(Vec<Cell>);

impl Row {
    fn cell(&self, column: usize) -> Result<&Cell, DbError> {
        self.0
            .get(column)
            .ok_or_else(|| DbError::new(format!("the row has no column {column}")))
    }

    /// Column `column` as a number.
    pub(super) fn int(&self, column: usize) -> Result<i64, DbError> {
        match self.cell(column)? {
            Cell::Int(value) => Ok(*value),
            other => Err(DbError::new(format!(
                "column {column} is {other:?}, not a number"
            ))),
        }
    }

    /// Column `column` as text.
    pub(super) fn text(&self, column: usize) -> Result<&str, DbError> {
        self.opt_text(column)?
            .ok_or_else(|| DbError::new(format!("column {column} is NULL, not text")))
    }

    /// Column `column` as text, or NULL.
    pub(super) fn opt_text(&self, column: usize) -> Result<Option<&str>, DbError> {
        match self.cell(column)? {
            Cell::Text(value) => Ok(Some(value)),
            Cell::Null => Ok(None),
            Cell::Int(value) => Err(DbError::new(format!(
                "column {column} is the number {value}, not text"
            ))),
        }
    }
}

/// What went wrong in the database, as it said it.
#[derive(Debug)]
pub(super) struct DbError(Box<dyn std::error::Error + Send + Sync>);

impl DbError {
    pub(super) fn new(message: String) -> Self {
        Self(message.into())
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<sqlx::Error> for DbError {
    fn from(error: sqlx::Error) -> Self {
        Self(Box::new(error))
    }
}

impl From<rusqlite::Error> for DbError {
    fn from(error: rusqlite::Error) -> Self {
        Self(Box::new(error))
    }
}

/// Which database a [`Link`] speaks to, where the writer's statements are spelled
/// differently for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dialect {
    Postgres,
    Sqlite,
}

impl Dialect {
    /// The `n`-th parameter (from 1). SQLite's `?N` is the N-th parameter by
    /// position, bound without looking its name up ([`bind`]); PostgreSQL numbers
    /// its parameters `$N`.
    pub(super) fn param(self, n: usize) -> String {
        match self {
            Self::Postgres => format!("${n}"),
            Self::Sqlite => format!("?{n}"),
        }
    }
}

/// The writer's connection: a transaction at a time, statements in it.
pub(super) trait Link: Send {
    /// The database's spelling of the writer's statements.
    const DIALECT: Dialect;

    /// Opens a transaction (connecting first, if the last one was let go) and runs
    /// `first` in it, a statement without parameters whose rows are not read, in the
    /// same round trip where the database allows.
    fn begin(&mut self, first: Option<&str>) -> impl Future<Output = Result<(), DbError>> + Send;

    /// Commits the open transaction.
    fn commit(&mut self) -> impl Future<Output = Result<(), DbError>> + Send;

    /// Drops what the open transaction did. After a database error the connection is
    /// also let go, the next [`Link::begin`] connects afresh: it may be what broke.
    fn abandon(&mut self, broken: bool) -> impl Future<Output = ()> + Send;

    /// Lets the connection go (the store is closing).
    fn release(&mut self);

    /// Whether it holds a connection.
    fn holds(&self) -> bool;

    /// Runs a statement; the rows it changed.
    fn execute(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
    ) -> impl Future<Output = Result<u64, DbError>> + Send;

    /// Runs a query; its rows.
    fn fetch_all(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
    ) -> impl Future<Output = Result<Vec<Row>, DbError>> + Send;

    /// Runs a query; its first row, if any.
    fn fetch_optional(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
    ) -> impl Future<Output = Result<Option<Row>, DbError>> + Send {
        async move { Ok(self.fetch_all(sql, args).await?.into_iter().next()) }
    }

    /// Runs a query that returns a row.
    fn fetch_one(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
    ) -> impl Future<Output = Result<Row, DbError>> + Send {
        async move {
            self.fetch_optional(sql, args)
                .await?
                .ok_or_else(|| DbError::new(format!("no row came back from: {sql}")))
        }
    }
}

/// A connection of the sqlx pool, kept from batch to batch (no checkout and no ping
/// per batch) until the database fails it.
pub(super) struct Pooled {
    pool: AnyPool,
    conn: Option<PoolConnection<Any>>,
}

impl Pooled {
    pub(super) const fn new(pool: AnyPool) -> Self {
        Self { pool, conn: None }
    }

    fn conn(&mut self) -> Result<&mut PoolConnection<Any>, DbError> {
        self.conn
            .as_mut()
            .ok_or_else(|| DbError::new("no transaction is open".into()))
    }

    fn query<'q>(
        sql: &'q str,
        args: &'q [Arg<'_>],
    ) -> sqlx::query::Query<'q, Any, sqlx::any::AnyArguments<'q>> {
        args.iter().fold(sqlx::query(sql), |query, arg| match arg {
            Arg::Int(value) => query.bind(*value),
            Arg::Text(value) => query.bind(value.as_ref()),
            Arg::NullInt => query.bind(None::<i64>),
            Arg::NullText => query.bind(None::<&str>),
        })
    }
}

impl Link for Pooled {
    const DIALECT: Dialect = Dialect::Postgres;

    async fn begin(&mut self, first: Option<&str>) -> Result<(), DbError> {
        if self.conn.is_none() {
            self.conn = Some(self.pool.acquire().await?);
        }
        match first {
            // One simple query, two statements: one round trip.
            Some(first) => self.conn()?.execute(&*format!("BEGIN; {first}")).await?,
            None => self.conn()?.execute("BEGIN").await?,
        };
        Ok(())
    }

    async fn commit(&mut self) -> Result<(), DbError> {
        let done = self.conn()?.execute("COMMIT").await;
        if done.is_err() {
            // A connection whose commit failed is in no state to return to the pool.
            if let Some(mut conn) = self.conn.take() {
                conn.close_on_drop();
            }
        }
        done?;
        Ok(())
    }

    async fn abandon(&mut self, broken: bool) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        let rolled_back = conn.execute("ROLLBACK").await.is_ok();
        if !rolled_back {
            // Not back to the pool with a transaction open: closed instead.
            conn.close_on_drop();
            self.conn = None;
        } else if broken {
            // Back to the pool, which checks it before it is used again.
            self.conn = None;
        }
    }

    fn release(&mut self) {
        self.conn = None;
    }

    fn holds(&self) -> bool {
        self.conn.is_some()
    }

    async fn execute(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, DbError> {
        let conn = self.conn()?;
        let done = Self::query(sql, args).execute(&mut **conn).await?;
        Ok(done.rows_affected())
    }

    async fn fetch_all(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<Row>, DbError> {
        let conn = self.conn()?;
        let rows = Self::query(sql, args).fetch_all(&mut **conn).await?;
        rows.iter().map(row_of).collect()
    }
}

/// A row as sqlx gives it, as a [`Row`].
fn row_of(row: &sqlx::any::AnyRow) -> Result<Row, DbError> {
    (0..row.len())
        .map(|column| {
            // A column is a number or text; which, the value says.
            if let Ok(value) = row.try_get::<Option<i64>, _>(column) {
                return Ok(value.map_or(Cell::Null, Cell::Int));
            }
            let value = row.try_get::<Option<String>, _>(column)?;
            Ok(value.map_or(Cell::Null, Cell::Text))
        })
        .collect::<Result<Vec<_>, DbError>>()
        .map(Row)
}

/// Where the store's point reads (a row by its key) are made: in place for the
/// embedded store ([`Readers`]), through the pool for PostgreSQL (a round trip to
/// the server either way). One query and one reading of its row serve both.
#[derive(Debug)]
pub(super) enum PointReads {
    /// The embedded store's own reader connections.
    InPlace(Readers),
    /// The sqlx pool.
    Pool(AnyPool),
}

impl PointReads {
    /// Runs a query; its first row, if any.
    pub(super) async fn fetch_optional(
        &self,
        sql: &str,
        args: &[Arg<'_>],
    ) -> Result<Option<Row>, DbError> {
        match self {
            Self::InPlace(readers) => readers.fetch_optional(sql, args),
            Self::Pool(pool) => Pooled::query(sql, args)
                .fetch_optional(pool)
                .await?
                .as_ref()
                .map(row_of)
                .transpose(),
        }
    }
}

/// The embedded store's writer connection: a SQLite connection of its own, used on
/// the writer's thread and nowhere else, in WAL mode with `synchronous = FULL` (a
/// commit is on disk when it returns).
pub(super) struct Embedded {
    path: PathBuf,
    /// The readers' pool: once it is closed, the store is, and so is this.
    pool: AnyPool,
    conn: Option<rusqlite::Connection>,
}

/// Statements a writer connection keeps prepared: every shape of the writer's
/// multi-row statements and the few others.
const PREPARED: usize = 64;

impl Embedded {
    pub(super) const fn new(path: PathBuf, pool: AnyPool) -> Self {
        Self {
            path,
            pool,
            conn: None,
        }
    }

    fn conn(&self) -> Result<&rusqlite::Connection, DbError> {
        self.conn
            .as_ref()
            .ok_or_else(|| DbError::new("no transaction is open".into()))
    }
}

/// `sql` prepared (or from the cache) with `args` bound: each `$n` takes the n-th
/// argument, wherever it stands and however often. A statement whose parameters are
/// spelled `?N` ([`Dialect::param`]) takes the N-th argument by position, without
/// asking each parameter's name: SQLite finds a name by walking its list, and asking
/// for each of a 64-row statement's ~700 names was a few percent of the writer's time.
fn bind<'c>(
    conn: &'c rusqlite::Connection,
    sql: &str,
    args: &[Arg<'_>],
) -> Result<rusqlite::CachedStatement<'c>, DbError> {
    let mut statement = conn.prepare_cached(sql)?;
    // The first parameter's name says how all are spelled (and asking for it is
    // cheap: it heads SQLite's list).
    let by_position = statement
        .parameter_name(1)
        .is_none_or(|name| name.starts_with('?'));
    for index in 1..=statement.parameter_count() {
        let arg = if by_position {
            args.get(index - 1).ok_or_else(|| {
                DbError::new(format!("no argument for parameter ?{index} of: {sql}"))
            })?
        } else {
            let name = statement.parameter_name(index).unwrap_or_default();
            name.strip_prefix('$')
                .and_then(|n| n.parse::<usize>().ok())
                .and_then(|n| args.get(n.checked_sub(1)?))
                .ok_or_else(|| {
                    DbError::new(format!("no argument for parameter {name:?} of: {sql}"))
                })?
        };
        match arg {
            Arg::Int(value) => statement.raw_bind_parameter(index, value)?,
            Arg::Text(value) => statement.raw_bind_parameter(index, value.as_ref())?,
            Arg::NullInt | Arg::NullText => statement.raw_bind_parameter(index, Null)?,
        }
    }
    Ok(statement)
}

/// Runs a bound statement; its rows.
fn read_rows(statement: &mut rusqlite::Statement<'_>) -> Result<Vec<Row>, DbError> {
    let columns = statement.column_count();
    let mut rows = statement.raw_query();
    let mut read = Vec::new();
    while let Some(row) = rows.next()? {
        let cells = (0..columns)
            .map(|column| {
                Ok(match row.get_ref(column)? {
                    ValueRef::Null => Cell::Null,
                    ValueRef::Integer(value) => Cell::Int(value),
                    ValueRef::Text(text) => Cell::Text(
                        std::str::from_utf8(text)
                            .map_err(|e| DbError::new(format!("column {column}: {e}")))?
                            .to_owned(),
                    ),
                    other => {
                        return Err(DbError::new(format!(
                            "column {column} holds {:?}, neither a number nor text",
                            other.data_type()
                        )));
                    }
                })
            })
            .collect::<Result<Vec<_>, DbError>>()?;
        read.push(Row(cells));
    }
    Ok(read)
}

/// Opens a connection to the embedded store's file, as the writer and the point
/// readers use it: WAL, and `synchronous = FULL` (a commit is on disk when it
/// returns).
fn open_file(path: &Path) -> Result<rusqlite::Connection, DbError> {
    let conn = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;",
    )?;
    conn.set_prepared_statement_cache_capacity(PREPARED);
    Ok(conn)
}

/// Point reads of the embedded store (a task by its id, a conversation's principal:
/// one or two per send), run on the asking task's thread, each on a connection of
/// the readers' own. Through the sqlx pool such a read hopped to a worker thread and
/// back, and with one per send that hop cost about a third of the store's HTTP
/// throughput. A point read is a few pages of an index, mostly from the page cache,
/// and in WAL mode a reader does not wait for the writer: work as short as other
/// work done in place on the runtime. Scans (lists, histories, event logs) stay on
/// the pool.
#[derive(Debug)]
pub(super) struct Readers {
    path: PathBuf,
    /// The store's pool: once it is closed, the store is, and so are these.
    pool: AnyPool,
    idle: Mutex<Vec<rusqlite::Connection>>,
}

/// How many reader connections are kept between reads (more are opened while more
/// reads run at once, and closed after).
const IDLE_READERS: usize = 4;

impl Readers {
    pub(super) const fn new(path: PathBuf, pool: AnyPool) -> Self {
        Self {
            path,
            pool,
            idle: Mutex::new(Vec::new()),
        }
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<rusqlite::Connection>> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs a query; its first row, if any.
    pub(super) fn fetch_optional(
        &self,
        sql: &str,
        args: &[Arg<'_>],
    ) -> Result<Option<Row>, DbError> {
        if self.pool.is_closed() {
            self.idle().clear();
            return Err(DbError::new("the task store is closed".into()));
        }
        let taken = self.idle().pop();
        let conn = match taken {
            Some(conn) => conn,
            None => {
                let conn = open_file(&self.path)?;
                conn.execute_batch("PRAGMA query_only = ON;")?;
                conn
            }
        };
        let read = bind(&conn, sql, args)
            .and_then(|mut statement| read_rows(&mut statement))
            .map(|rows| rows.into_iter().next());
        // A connection that failed may be what is wrong: the next read opens another.
        if read.is_ok() {
            let mut idle = self.idle();
            if idle.len() < IDLE_READERS {
                idle.push(conn);
            }
        }
        read
    }
}

impl Link for Embedded {
    const DIALECT: Dialect = Dialect::Sqlite;

    async fn begin(&mut self, first: Option<&str>) -> Result<(), DbError> {
        if self.pool.is_closed() {
            return Err(DbError::new("the task store is closed".into()));
        }
        if self.conn.is_none() {
            self.conn = Some(open_file(&self.path)?);
        }
        // IMMEDIATE: the write lock from the start, so a batch never finds the file
        // taken halfway through.
        self.conn()?.execute_batch("BEGIN IMMEDIATE")?;
        if let Some(first) = first {
            self.conn()?.execute_batch(first)?;
        }
        Ok(())
    }

    async fn commit(&mut self) -> Result<(), DbError> {
        let conn = self.conn()?;
        let done = conn.execute_batch("COMMIT");
        if done.is_err() && !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        done?;
        Ok(())
    }

    async fn abandon(&mut self, broken: bool) {
        if let Some(conn) = &self.conn
            && !conn.is_autocommit()
        {
            let _ = conn.execute_batch("ROLLBACK");
        }
        if broken {
            self.conn = None;
        }
    }

    fn release(&mut self) {
        self.conn = None;
    }

    fn holds(&self) -> bool {
        self.conn.is_some()
    }

    async fn execute(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, DbError> {
        let mut statement = bind(self.conn()?, sql, args)?;
        let changed = statement.raw_execute()?;
        Ok(u64::try_from(changed).unwrap_or(u64::MAX))
    }

    async fn fetch_all(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<Row>, DbError> {
        let mut statement = bind(self.conn()?, sql, args)?;
        read_rows(&mut statement)
    }
}

#[cfg(test)]
mod tests {
    use super::{Arg, Embedded, Link, Readers};

    async fn embedded() -> (tempfile::TempDir, Embedded) {
        let (dir, pool) = pool().await;
        let link = Embedded::new(dir.path().join("t.db"), pool);
        (dir, link)
    }

    async fn pool() -> (tempfile::TempDir, sqlx::AnyPool) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("t.db");
        sqlx::any::install_default_drivers();
        let pool = sqlx::AnyPool::connect(&format!("sqlite://{}?mode=rwc", path.display()))
            .await
            .expect("pool");
        (dir, pool)
    }

    #[tokio::test]
    async fn numbered_parameters_bind_by_number_wherever_they_stand() {
        let (_dir, mut link) = embedded().await;
        link.begin(None).await.expect("begin");
        link.execute("CREATE TABLE t (a TEXT, b BIGINT, c BIGINT)", &[])
            .await
            .expect("create");
        let written = link
            .execute(
                "INSERT INTO t (a, b, c) VALUES ($2, $1, $3)",
                &[Arg::from(7), Arg::from("x"), Arg::from(None::<i64>)],
            )
            .await
            .expect("insert");
        assert_eq!(written, 1);
        let row = link
            .fetch_one(
                "SELECT a, b, c, $1 + b FROM t WHERE b = $1",
                &[Arg::from(7)],
            )
            .await
            .expect("the row");
        assert_eq!(row.text(0).expect("a"), "x");
        assert_eq!(row.int(1).expect("b"), 7);
        assert!(row.int(2).is_err(), "NULL is no number");
        assert_eq!(row.int(3).expect("$1 twice"), 14);
        link.commit().await.expect("commit");
    }

    #[tokio::test]
    async fn an_abandoned_transaction_leaves_nothing() {
        let (_dir, mut link) = embedded().await;
        link.begin(None).await.expect("begin");
        link.execute("CREATE TABLE t (a BIGINT)", &[])
            .await
            .expect("create");
        link.commit().await.expect("commit");
        link.begin(None).await.expect("begin");
        link.execute("INSERT INTO t (a) VALUES ($1)", &[Arg::from(1)])
            .await
            .expect("insert");
        link.abandon(true).await;
        assert!(!link.holds(), "let go after a database error");
        link.begin(None).await.expect("connects again");
        let rows = link
            .fetch_all("SELECT a FROM t", &[])
            .await
            .expect("select");
        assert!(rows.is_empty());
        link.commit().await.expect("commit");
    }

    #[tokio::test]
    async fn a_missing_argument_is_an_error_that_names_it() {
        let (_dir, mut link) = embedded().await;
        link.begin(None).await.expect("begin");
        let error = link
            .fetch_one("SELECT $2", &[Arg::from(1)])
            .await
            .expect_err("only one argument");
        assert!(error.to_string().contains("$2"), "{error}");
    }

    #[tokio::test]
    async fn point_readers_see_what_the_writer_committed_and_stop_at_close() {
        let (dir, pool) = pool().await;
        let mut link = Embedded::new(dir.path().join("t.db"), pool.clone());
        link.begin(None).await.expect("begin");
        link.execute("CREATE TABLE t (a TEXT, b TEXT)", &[])
            .await
            .expect("create");
        link.commit().await.expect("commit");
        let readers = Readers::new(dir.path().join("t.db"), pool.clone());
        let read = || readers.fetch_optional("SELECT a, b FROM t WHERE a = $1", &["x".into()]);
        assert!(read().expect("read").is_none());

        link.begin(None).await.expect("begin");
        link.execute(
            "INSERT INTO t (a, b) VALUES ($1, $2)",
            &["x".into(), None::<&str>.into()],
        )
        .await
        .expect("insert");
        assert!(read().expect("read").is_none(), "not committed yet");
        link.commit().await.expect("commit");
        let row = read().expect("read").expect("committed");
        assert_eq!(row.text(0).expect("a"), "x");
        assert_eq!(row.opt_text(1).expect("b"), None);

        pool.close().await;
        let error = read().expect_err("closed");
        assert!(error.to_string().contains("closed"), "{error}");
    }
}
