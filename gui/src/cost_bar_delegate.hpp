// Paints a cost cell with a bar behind its text: the share of the column's
// total (the model's `fraction_role`, 0..1), as heaptrack_gui's trees do.
#pragma once

#include <QStyledItemDelegate>

namespace memtrail::gui {

class CostBarDelegate : public QStyledItemDelegate {
 public:
  CostBarDelegate(int fraction_role, QObject* parent = nullptr)
      : QStyledItemDelegate(parent), fraction_role_(fraction_role) {}
  void paint(QPainter* painter, const QStyleOptionViewItem& option,
             const QModelIndex& index) const override;

 private:
  int fraction_role_;
};

}  // namespace memtrail::gui
