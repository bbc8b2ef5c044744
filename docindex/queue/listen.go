package queue

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
)

// ErrListenUnsupported is returned by Listen when the database does not run on the pgx stdlib
// driver; workers then rely on polling alone.
var ErrListenUnsupported = errors.New("queue: listen needs a database opened with the pgx stdlib driver")

// listenPing is how long a listening connection may stay silent before it is checked: a
// connection that died without a word (a dropped network path) would otherwise wait forever.
const listenPing = 30 * time.Second

// Listen calls wake whenever jobs may have become claimable: on each notification from
// Enqueue, Retry, Release or Rescue, and once each time the listening connection is
// (re)established, since notifications sent while it was down are lost. It holds one connection
// of the pool, reconnects with backoff when the connection breaks, and returns ctx.Err() when ctx
// ends, or ErrListenUnsupported. wake must not block.
func (q *Queue) Listen(ctx context.Context, wake func()) error {
	delay := 100 * time.Millisecond
	for {
		start := time.Now()
		err := q.listenOnce(ctx, wake)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, ErrListenUnsupported) {
			return err
		}
		if time.Since(start) > time.Minute {
			delay = 100 * time.Millisecond
		}
		q.log.Warn("queue: listening connection lost; reconnecting", "err", err, "in", delay)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 10*time.Second)
	}
}

func (q *Queue) listenOnce(ctx context.Context, wake func()) error {
	conn, err := q.db.DB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("queue: listen: %w", err)
	}
	defer conn.Close()
	var cause error
	// The connection is always discarded afterwards (ErrBadConn): it is subscribed to the
	// channel and must not go back to the pool.
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			cause = ErrListenUnsupported
			return ErrListenUnsupported
		}
		pc := sc.Conn()
		if _, err := pc.Exec(ctx, "LISTEN "+Channel); err != nil {
			cause = err
			return driver.ErrBadConn
		}
		wake()
		for {
			wctx, cancel := context.WithTimeout(ctx, listenPing)
			_, err := pc.WaitForNotification(wctx)
			cancel()
			switch {
			case err == nil:
				wake()
			case ctx.Err() != nil:
				cause = ctx.Err()
				return driver.ErrBadConn
			case wctx.Err() != nil:
				// Quiet for a while: make sure the connection still answers.
				if err := pc.Ping(ctx); err != nil {
					cause = err
					return driver.ErrBadConn
				}
			default:
				cause = err
				return driver.ErrBadConn
			}
		}
	})
	if cause != nil {
		return cause
	}
	return err
}
